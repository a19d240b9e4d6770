"""A run's record, read back by every backend: committed results, outcome counts, evidence.

These are what a verdict reads once state has let go of older results, and what the
writes that skip their own flush (reads, checkpointed events) must still leave behind.
"""

from __future__ import annotations

import json
from typing import Any

from execgraph.state.events import EventType, make_event
from execgraph.state.store import ExecutionStore
from execgraph.state.store.rows import event_from_row, event_to_row
from tests.state.store.store_helpers import Opener, reserve


def test_committed_lists_a_runs_committed_records_oldest_first(
    store: ExecutionStore, open_new: Opener
) -> None:
    reserve(store, "k1", run_id="run-1")
    reserve(store, "k2", run_id="run-2")
    reserve(store, "k3", run_id="run-1")
    reserve(store, "k4", run_id="run-1")
    store.commit("k4", {"v": 4})
    store.commit("k1", {"v": 1})
    store.commit("k2", {"v": 2})
    store.close()

    reopened = open_new()
    records = reopened.committed("run-1")
    assert [(r.idempotency_key, r.result) for r in records] == [("k1", {"v": 1}), ("k4", {"v": 4})]
    assert [r.idempotency_key for r in reopened.committed("run-2")] == ["k2"]
    assert reopened.committed("run-x") == []


def test_committed_pages_through_a_long_run(store: ExecutionStore) -> None:
    for i in range(7):
        reserve(store, f"k{i}", run_id="run-1")
        store.commit(f"k{i}", {"v": i})
    pages = [store.committed("run-1", offset=o, limit=3) for o in (0, 3, 6, 9)]
    assert [[r.result for r in page] for page in pages] == [
        [{"v": 0}, {"v": 1}, {"v": 2}],
        [{"v": 3}, {"v": 4}, {"v": 5}],
        [{"v": 6}],
        [],
    ]


def test_outcomes_and_evidence_are_read_in_the_database(
    store: ExecutionStore, open_new: Opener
) -> None:
    def result(tool: str, outcome: str, *sources: str) -> dict[str, Any]:
        items = [{"source_id": s, "kind": "k", "value": s} for s in sources]
        status = "OK" if outcome == "succeeded" else "ERROR"
        return {"tool_name": tool, "outcome": outcome, "status": status, "evidence": items}

    committed = [
        result("read", "succeeded", "a"),
        result("read", "succeeded"),
        result("read", "failed"),
        result("write", "unknown", "b", "c"),
        {"v": 1},  # a result without the usual fields counts, and carries no evidence
    ]
    for i, body in enumerate(committed):
        reserve(store, f"k{i}", run_id="run-1")
        store.commit(f"k{i}", body)
    reserve(store, "other", run_id="run-2")
    store.commit("other", result("read", "succeeded", "z"))
    reserve(store, "open", run_id="run-1")  # started, never committed: not counted
    store.close()

    reopened = open_new()
    counts = {(c.tool, c.outcome, c.status): c.count for c in reopened.outcomes("run-1")}
    assert counts == {
        ("read", "succeeded", "OK"): 2,
        ("read", "failed", "ERROR"): 1,
        ("write", "unknown", "ERROR"): 1,
        ("", "", ""): 1,
    }
    assert [e["source_id"] for e in reopened.evidence("run-1")] == ["a", "b", "c"]
    assert reopened.outcomes("run-x") == [] and reopened.evidence("run-x") == []


def test_writes_that_skip_their_flush_are_still_visible_and_kept(
    store: ExecutionStore, open_new: Opener
) -> None:
    lazy = store.reserve(
        "k-read",
        run_id="run-1",
        call_id="c1",
        tool="read",
        version="1",
        args_hash="h",
        attempt_id="a",
        durable=False,
    )
    assert lazy.fresh
    assert store.append_events([make_event(EventType.RUN_ADMITTED, "run-1")], durable=False)
    other = open_new()  # another worker sees both at once
    assert other.get("k-read") is not None
    assert other.has_event("run-1", EventType.RUN_ADMITTED)
    store.commit("k-read", {"v": "read"}, durable=False)
    assert other.get("k-read").result == {"v": "read"}  # type: ignore[union-attr]
    # and the next durable write is durable as usual
    reserve(store, "k-write", run_id="run-1")
    store.close()
    other.close()
    reopened = open_new()
    assert [r.idempotency_key for r in reopened.pending("run-1")] == ["k-write"]
    assert [r.result for r in reopened.committed("run-1")] == [{"v": "read"}]


def test_one_event_reads_back_by_its_id(store: ExecutionStore, open_new: Opener) -> None:
    # A turn re-run looks up the reply it logged by its deterministic id.
    event = make_event(EventType.MODEL_CALLED, "run-1", turn_id="t3", seq=1, payload={"n": 1})
    store.append_events([event], durable=False)
    reader = open_new()
    assert reader.event(event.event_id) == event
    assert reader.event("run-1/nowhere:tool.requested") is None


def test_an_event_row_does_not_repeat_its_columns() -> None:
    # Six events a step: the payload holds only what the columns do not (both backends
    # write and read rows with these two functions).
    event = make_event(EventType.TOOL_OUTPUT, "run-1", call_id="c1", attempt_id="a1", seq=0)
    row = event_to_row(event)
    payload = json.loads(row[-1])
    assert not {"event_id", "run_id", "call_id", "type", "ts"} & set(payload)
    assert payload["attempt_id"] == "a1"
    assert event_from_row(row) == event
    # A row written whole (by an earlier version) reads back the same.
    assert event_from_row((*row[:-1], event.model_dump_json())) == event
