"""A node's updates fold with the schema's own reducers, exactly as LangGraph folds them."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from execgraph.state.reducers import (
    REPLAY_WINDOW,
    RESULTS_WINDOW,
    append_window,
    dedupe_events,
    merge_evidence,
    replace_plan_if_newer,
    sticky_status,
)
from execgraph.state.schema import ExecutorOutput, RunState
from execgraph.state.updates import fold, merge, rules
from tests.state.reducer_helpers import charge, ev, result


def _through_langgraph(seed: dict[str, Any], returned: Any) -> tuple[dict[str, Any], Any]:
    """What a node of a real ``StateGraph(RunState)`` reads, and the state after it
    returns ``returned``."""
    seen: dict[str, Any] = {}

    def node(state: dict[str, Any]) -> Any:
        seen.update(state)
        return returned

    builder = StateGraph(RunState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return seen, builder.compile().invoke(seed)


_SEED: dict[str, Any] = {
    "results": {"old": result("old")},
    "events": {"count": 3, "recent": ["e0", "e1", "e2"]},
    "budget": {"used": {"model_calls": 1}, "charges": ["t0:model"]},
    "evidence": {"s": ev("s", "first")},
    "status": "WAITING",
    "pending": [{"call_id": "old"}],
    "turn": 0,
}

# One node's partial updates: more results than the results window, more new events than
# the replay window (one of them twice), a budget charged twice, contrary evidence, a
# status and a plain field written more than once.
_UPDATES: list[dict[str, Any]] = [
    {
        "pending": [],
        "status": "RUNNING",
        "events": {"recent": [f"a{i}" for i in range(20)]},
        "budget": charge(["t1:model"], model_calls=1),
        "turn": 1,
    },
    {
        "results": {f"c{i}": result(f"c{i}") for i in range(RESULTS_WINDOW + 4)},
        "events": {"recent": ["a0", *(f"b{i}" for i in range(20))]},
        "evidence": {"s": ev("s", "second"), "t": ev("t")},
        "budget": charge(["t1:dispatch"], tool_calls=20),
        "status": "WAITING",
        "pending": [{"call_id": "c0"}],
    },
    {"evidence": {"s": ev("s", "third")}, "events": ["z"]},
]


def test_the_merged_update_is_the_writes_applied_one_by_one() -> None:
    writes = [(k, v) for update in _UPDATES for k, v in update.items() if k != "turn"]
    _, one_by_one = _through_langgraph(_SEED, Command(update=[*writes, ("turn", 1)]))
    seen, merged = _through_langgraph(_SEED, merge(_UPDATES))
    assert merged == one_by_one
    # Nothing of the turn was dropped or miscounted by a window on the way.
    assert merged["events"]["count"] == 3 + 20 + 20 + 1
    assert set(merged["results"]) == {f"c{i}" for i in range(4, RESULTS_WINDOW + 4)}
    assert merged["evidence"]["s"]["conflicts"] == ["second", "third"]
    assert merged["budget"]["used"] == {"model_calls": 2, "tool_calls": 20}
    assert merged["status"] == "WAITING" and merged["pending"] == [{"call_id": "c0"}]
    # What a node reads as the state after its update is what LangGraph then holds.
    assert fold(seen, merge(_UPDATES)) == merged


def test_fold_is_langgraphs_fold_of_one_update() -> None:
    for update in _UPDATES:
        seen, after = _through_langgraph(_SEED, update)
        assert fold(seen, update) == after


def test_every_field_folds_with_the_reducer_its_annotation_declares() -> None:
    table = rules(RunState)
    assert set(table) == set(RunState.__annotations__) | set(ExecutorOutput.__annotations__)
    # Plain reducers are used as declared; a DeltaChannel's batch form folds one write.
    item = {"source_id": "s", "kind": "k", "value": "v"}
    assert table["evidence"].apply(None, {"s": item}) == merge_evidence(None, {"s": item})
    assert table["status"].apply is sticky_status
    assert table["plan"].apply is replace_plan_if_newer
    assert table["feedback"].apply is append_window
    ids = [f"e{i}" for i in range(2 * REPLAY_WINDOW)]
    assert table["events"].apply(None, {"recent": ids}) == dedupe_events(None, ids)
    assert table["pending"].apply([1], [2]) == [2]
    assert table["turn"].apply(1, 2) == 2  # a plain field: the last write wins
    assert rules(ExecutorOutput).keys() == {"results", "evidence", "budget", "events", "messages"}


def test_updates_of_one_node_fold_into_one_write_without_losing_events() -> None:
    # (Formerly the ReAct turn's own ``combine``.)
    first = {
        "events": {"recent": [f"a{i}" for i in range(REPLAY_WINDOW)]},
        "budget": {"used": {"model_calls": 1}, "charges": ["t1:model"]},
        "turn": 1,
    }
    second = {
        "events": {"recent": [f"b{i}" for i in range(REPLAY_WINDOW)]},
        "budget": {"used": {"tool_calls": 3}, "charges": ["t1:dispatch"]},
        "results": {"c1": {"call_id": "c1"}},
        "turn": 1,
    }
    merged = merge([first, second])
    # The channel's reducer windows the ids; the count must see all of them.
    assert dedupe_events(None, merged["events"])["count"] == 2 * REPLAY_WINDOW
    assert merged["budget"]["used"] == {"model_calls": 1, "tool_calls": 3}
    assert merged["results"] == {"c1": {"call_id": "c1"}} and merged["turn"] == 1
