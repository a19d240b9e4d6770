"""Stages 5 and 10 alone: the record is reserved before anything runs, committed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.nodes.executor.stages.commit import build_result, commit, failure_result
from execgraph.nodes.executor.stages.invoke import Invoked
from execgraph.nodes.executor.stages.outcome import settle
from execgraph.nodes.executor.stages.reserve import idempotency_key, reserve
from execgraph.state.errors import DomainViolation, TransientError
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import AdapterOutput
from tests.nodes.executor.stages.stage_helpers import authorized, call_of, no_artifacts, req, save


def test_reserve_fresh_committed_in_doubt_and_key_clash(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "s.db")
    request = req()
    auth = authorized(save, request)
    assert idempotency_key(request) == "r:c"
    first = reserve(call_of(request, auth, store, "a1"))
    assert first.kind == "fresh"
    assert reserve(call_of(request, auth, store, "a2")).kind == "in_doubt"
    call = call_of(request, auth, store, "a1", key=first.key)
    output = AdapterOutput(data="ok", committed=True)
    result = build_result(call, settle(save, Invoked(output, None, 3), 1024, no_artifacts))
    committed = commit(call, result, None)
    assert committed.result == result
    again = reserve(call_of(request, auth, store, "a3"))
    assert again.kind == "committed" and again.record.result == result.model_dump(mode="json")
    other = authorized(save, req(args={"path": "b.txt"}))
    with pytest.raises(DomainViolation):
        reserve(call_of(request, other, store, "a4"))
    # the first commit wins: a late duplicate commit returns the original
    late = failure_result(request, TransientError("late"))
    assert commit(call_of(request, auth, store, "a1"), late, None).result == result
