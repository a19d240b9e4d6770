"""Stage 4a alone: allow, ask, or deny; a signed token allows only what it names."""

from __future__ import annotations

import pytest

from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.tokens import issue_token
from execgraph.state.errors import PolicyDenied
from execgraph.tools import PolicyEngine
from tests.nodes.executor.stages.stage_helpers import SECRET, authorized, launch, req, save


def test_policy_verdicts_and_token() -> None:
    assert authorized(save, req()).decision.verdict == "allow"
    request = req("launch", {"target": "x"})
    assert authorized(launch, request).decision.verdict == "require_approval"
    with pytest.raises(PolicyDenied):
        authorized(launch, request, PolicyEngine([{"tool": "launch", "decision": "deny"}]))
    token = issue_token(SECRET, tool_key="launch@1.0.0", args_hash=stable_hash({"target": "x"}))
    ok = authorized(launch, req("launch", {"target": "x"}, approval_token=token))
    assert ok.decision.verdict == "allow" and ok.token_id
    with pytest.raises(PolicyDenied):  # a token never overrides a deny
        authorized(
            launch,
            req("launch", {"target": "x"}, approval_token=token),
            PolicyEngine([{"tool": "launch", "decision": "deny"}]),
        )
