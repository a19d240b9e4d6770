"""Stage 4b alone: what a person is shown, whether it is still fresh, how an answer reads."""

from __future__ import annotations

import time

import pytest

from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.stages.approval import (
    approval_request,
    check_fresh,
    parse_decision,
)
from execgraph.state.errors import ApprovalStale
from tests.nodes.executor.stages.stage_helpers import authorized, launch, req


def test_approval_request_freshness() -> None:
    request = req("launch", {"target": "x"}, deadline=time.time() + 100)
    auth = authorized(launch, request)
    asked = approval_request(request, auth, ttl_s=3600)
    assert asked.expires_at is not None and asked.expires_at <= request.deadline  # type: ignore[operator]
    assert asked.args_hash == stable_hash({"target": "x"})
    check_fresh(asked, auth)
    with pytest.raises(ApprovalStale):
        check_fresh(asked, authorized(launch, req("launch", {"target": "y"})))
    with pytest.raises(ApprovalStale):
        newer = launch.with_(version="1.0.1")
        check_fresh(asked, authorized(newer, request))
    with pytest.raises(ApprovalStale):
        check_fresh(asked, auth, now=asked.expires_at + 1)  # type: ignore[operator]


def test_parse_decision_fails_closed() -> None:
    assert parse_decision({"action": "approve"}).action == "approve"
    assert parse_decision("reject").action == "reject"
    assert parse_decision({"action": "delete-prod"}).action == "reject"
    assert parse_decision(None).action == "reject"
