"""The verifier's whole-record view over a real SQLite execution store."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from execgraph.nodes.run_record import full_view
from execgraph.state.store.sqlite import SqliteExecutionStore


def _evidence(source: str, value: str) -> dict[str, Any]:
    return {"source_id": source, "kind": "file_hash", "value": value, "version": 1}


def _result(call_id: str, tool: str, outcome: str, *evidence: dict[str, Any]) -> dict[str, Any]:
    status = "OK" if outcome == "succeeded" else "ERROR"
    return {
        "call_id": call_id,
        "tool_name": tool,
        "outcome": outcome,
        "status": status,
        "data": "x" * 50,
        "evidence": list(evidence),
    }


@pytest.fixture
def store(tmp_path: Path) -> SqliteExecutionStore:
    return SqliteExecutionStore(tmp_path / "exec.db")


def _commit(store: SqliteExecutionStore, result: dict[str, Any], run_id: str = "run") -> None:
    key = f"{run_id}:{result['call_id']}"
    store.reserve(
        key,
        run_id=run_id,
        call_id=result["call_id"],
        tool=result["tool_name"],
        version="1",
        args_hash="h",
        attempt_id="a",
    )
    store.commit(key, result)


def test_every_committed_call_is_counted_per_tool_and_outcome(
    store: SqliteExecutionStore,
) -> None:
    n = 2 * 256 + 10  # more than two pages
    for i in range(n):
        _commit(store, _result(f"c{i}", "read", "succeeded" if i % 3 else "failed"))
    _commit(store, _result("other-run", "publish", "succeeded"), run_id="elsewhere")
    recent = {"c0": _result("c0", "read", "failed"), "r1": _result("r1", "refused", "failed")}
    deps: Any = SimpleNamespace(executor=SimpleNamespace(store=store))

    view = full_view({"results": recent, "output": "x"}, "run", deps)

    assert view["results"]["c0"] == recent["c0"] and view["results"]["r1"] == recent["r1"]
    summaries = {k: v for k, v in view["results"].items() if k.startswith("all:")}
    counts = {(v["tool_name"], v["outcome"]): v["count"] for v in summaries.values()}
    failed = len([i for i in range(n) if i % 3 == 0])
    assert counts == {("read", "failed"): failed, ("read", "succeeded"): n - failed}
    assert view["output"] == "x"
    assert full_view(view, "run", deps) == view  # already whole: no second read


def test_evidence_is_the_whole_runs_set_with_conflicts_flagged(
    store: SqliteExecutionStore,
) -> None:
    _commit(store, _result("c0", "read", "succeeded", _evidence("file:a", "v1")))
    for i in range(1, 256 + 5):
        _commit(store, _result(f"c{i}", "read", "succeeded", _evidence(f"file:{i}", "v")))
    late = _result("late", "read", "succeeded", _evidence("file:a", "v2"))
    deps: Any = SimpleNamespace(executor=SimpleNamespace(store=store))

    view = full_view({"results": {"late": late}}, "run", deps)

    assert len(view["evidence"]) == 256 + 5
    assert view["evidence"]["file:a"]["conflict"] is True
    assert view["evidence"]["file:a"]["conflicts"] == ["v2"]
