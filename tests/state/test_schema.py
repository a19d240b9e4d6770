"""The state schema under a real LangGraph runtime.

Reducers are only useful if the TypedDicts wire them to the channels: these tests compile
tiny ``StateGraph(RunState)`` graphs whose parallel branches write the shared fields in one
superstep, and check that LangGraph merges (not overwrites) them.
"""

from __future__ import annotations

import itertools
import typing
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import InvalidUpdateError
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from execgraph.state.reducers import (
    budget_batch,
    events_batch,
    evidence_batch,
    history_batch,
    messages_batch,
    progress_batch,
    replace_plan_if_newer,
    results_batch,
    sticky_status,
)
from execgraph.state.schema import (
    SNAPSHOT_EVERY,
    ExecutorInput,
    ExecutorOutput,
    ExecutorState,
    RunState,
    SharedFields,
)

SHARED = {
    "results": results_batch,
    "evidence": evidence_batch,
    "budget": budget_batch,
    "events": events_batch,
    "messages": messages_batch,
}


def _reducers(schema: type) -> dict[str, Any]:
    """Field name -> reducer (a callable or a DeltaChannel's reducer in metadata), or None."""
    out: dict[str, Any] = {}
    for name, hint in typing.get_type_hints(schema, include_extras=True).items():
        meta = getattr(hint, "__metadata__", ())
        delta = next((m for m in meta if isinstance(m, DeltaChannel)), None)
        out[name] = delta.reducer if delta else next((m for m in meta if callable(m)), None)
    return out


def _deltas(schema: type) -> dict[str, int]:
    """Field name -> snapshot frequency, for the fields kept in DeltaChannels."""
    out: dict[str, int] = {}
    for name, hint in typing.get_type_hints(schema, include_extras=True).items():
        for meta in getattr(hint, "__metadata__", ()):
            if isinstance(meta, DeltaChannel):
                out[name] = meta.snapshot_frequency
    return out


# --------------------------------------------------------------------------- annotations


def test_shared_fields_carry_their_named_reducers() -> None:
    assert _reducers(SharedFields) == SHARED


def test_run_state_adds_status_and_plan_reducers() -> None:
    reducers = _reducers(RunState)
    assert {k: reducers[k] for k in SHARED} == SHARED
    assert reducers["status"] is sticky_status
    assert reducers["plan"] is replace_plan_if_newer
    assert reducers["history"] is history_batch
    assert reducers["progress"] is progress_batch
    # Plain last-write fields stay plain.
    for name in ("task", "contract", "admitted", "output", "error"):
        assert reducers[name] is None


def test_executor_output_is_reducer_fields_only() -> None:
    # The executor may only hand back fields that merge, so parallel calls never collide.
    assert _reducers(ExecutorOutput) == SHARED
    assert set(typing.get_type_hints(ExecutorInput)) == {"request", "batch"}
    assert set(typing.get_type_hints(ExecutorState)) >= {"request", *SHARED}


def test_channels_written_every_step_are_delta_channels() -> None:
    # A checkpoint stores their update, not their whole window again.
    every = {
        "results",
        "evidence",
        "budget",
        "events",
        "history",
        "progress",
        "decisions",
        "pending",
        "messages",
    }
    assert _deltas(RunState) == dict.fromkeys(every, SNAPSHOT_EVERY)


# --------------------------------------------------------------------------- fan-out


def _branch(name: str, charge_id: str, *, evidence_as_list: bool) -> Any:
    def node(state: RunState) -> dict[str, Any]:
        item = {"source_id": f"file:{name}", "kind": "file_hash", "value": name, "version": 1}
        return {
            "evidence": [item] if evidence_as_list else {item["source_id"]: item},
            "budget": {"used": {"tool_calls": 1, "tokens_in": 10}, "charges": [charge_id]},
            "results": {f"call-{name}": {"call_id": f"call-{name}", "outcome": "succeeded"}},
            # Both branches also re-emit the run-level event: it must count once.
            "events": [f"call-{name}:tool.completed", "run-1:run.admitted"],
        }

    return node


def _fan_out_graph(join: Any = None) -> Any:
    builder = StateGraph(RunState)
    builder.add_node("a", _branch("a", "charge-a", evidence_as_list=True))
    builder.add_node("b", _branch("b", "charge-b", evidence_as_list=False))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    if join is None:
        builder.add_edge(["a", "b"], END)
    else:
        builder.add_node("join", join)
        builder.add_edge(["a", "b"], "join")
        builder.add_edge("join", END)
    return builder.compile()


def test_parallel_branches_merge_every_shared_field() -> None:
    out = _fan_out_graph().invoke({"task": {"goal": "g"}})
    assert set(out["evidence"]) == {"file:a", "file:b"}
    assert out["evidence"]["file:a"]["value"] == "a"
    assert out["evidence"]["file:b"]["value"] == "b"
    assert out["budget"]["used"] == {"tool_calls": 2, "tokens_in": 20}
    assert sorted(out["budget"]["charges"]) == ["charge-a", "charge-b"]
    assert set(out["results"]) == {"call-a", "call-b"}
    assert out["events"]["count"] == 3
    assert sorted(out["events"]["recent"]) == [
        "call-a:tool.completed",
        "call-b:tool.completed",
        "run-1:run.admitted",
    ]
    assert out["task"] == {"goal": "g"}


def test_a_replayed_write_after_the_fan_in_does_not_double_count() -> None:
    def replay(state: RunState) -> dict[str, Any]:
        # A node re-run after an interrupt re-emits what branch "a" already wrote.
        return _branch("a", "charge-a", evidence_as_list=True)(state)

    out = _fan_out_graph(join=replay).invoke({})
    assert out["budget"]["used"] == {"tool_calls": 2, "tokens_in": 20}
    assert out["events"]["count"] == 3
    assert set(out["results"]) == {"call-a", "call-b"}
    assert set(out["evidence"]) == {"file:a", "file:b"}
    assert "conflict" not in out["evidence"]["file:a"]


def test_parallel_sends_sum_distinct_charges() -> None:
    n = 7

    def call(state: RunState) -> dict[str, Any]:
        i = typing.cast(dict[str, Any], state)["i"]  # a Send payload, not the run state
        return {
            "budget": {"used": {"tool_calls": 1, "cost_usd": 2}, "charges": [f"c{i}"]},
            "results": {f"call-{i}": {"call_id": f"call-{i}", "outcome": "succeeded"}},
            "events": {"recent": [f"call-{i}:tool.completed"]},
            "evidence": [{"source_id": f"s{i}", "kind": "k", "value": str(i)}],
        }

    builder = StateGraph(RunState)
    builder.add_node("call", call)
    builder.add_conditional_edges(START, lambda s: [Send("call", {"i": i}) for i in range(n)])
    builder.add_edge("call", END)
    out = builder.compile().invoke({})
    assert out["budget"]["used"] == {"tool_calls": n, "cost_usd": 2 * n}
    assert len(out["budget"]["charges"]) == n
    assert set(out["results"]) == {f"call-{i}" for i in range(n)}
    assert out["events"]["count"] == n
    assert set(out["evidence"]) == {f"s{i}" for i in range(n)}


def test_same_source_same_version_in_one_superstep_is_flagged() -> None:
    def writer(value: str) -> Any:
        def node(state: RunState) -> dict[str, Any]:
            return {"evidence": [{"source_id": "url:x", "kind": "http", "value": value}]}

        return node

    builder = StateGraph(RunState)
    builder.add_node("a", writer("one"))
    builder.add_node("b", writer("two"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], END)
    out = builder.compile().invoke({})
    item = out["evidence"]["url:x"]
    assert item["conflict"] is True
    # Whichever branch LangGraph applied first is kept; the other is listed, not lost.
    assert {item["value"], *item["conflicts"]} == {"one", "two"}


# --------------------------------------------------------------------------- status / plan


def test_terminal_status_survives_a_later_running_write() -> None:
    builder = StateGraph(RunState)
    builder.add_node("verify", lambda s: {"status": "COMPLETED"})
    builder.add_node("late", lambda s: {"status": "RUNNING"})
    builder.add_edge(START, "verify")
    builder.add_edge("verify", "late")
    builder.add_edge("late", END)
    out = builder.compile().invoke({"status": "RUNNING"})
    assert out["status"] == "COMPLETED"


@pytest.mark.parametrize("first", ["COMPLETED", "RUNNING"])
def test_terminal_status_wins_in_one_superstep_either_way(first: str) -> None:
    # Node names decide LangGraph's application order; both orders must end COMPLETED.
    second = "RUNNING" if first == "COMPLETED" else "COMPLETED"
    builder = StateGraph(RunState)
    builder.add_node("n1", lambda s: {"status": first})
    builder.add_node("n2", lambda s: {"status": second})
    builder.add_edge(START, "n1")
    builder.add_edge(START, "n2")
    builder.add_edge(["n1", "n2"], END)
    assert builder.compile().invoke({"status": "RUNNING"})["status"] == "COMPLETED"


def test_waiting_and_running_alternate_until_terminal() -> None:
    seen: list[str | None] = []

    def record(status: str) -> Any:
        def node(state: RunState) -> dict[str, Any]:
            seen.append(state["status"])
            return {"status": status}

        return node

    builder = StateGraph(RunState)
    steps = ["WAITING", "RUNNING", "WAITING", "FAILED", "RUNNING"]
    names = [f"s{i}" for i in range(len(steps))]
    for name, status in zip(names, steps, strict=True):
        builder.add_node(name, record(status))
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    out = builder.compile().invoke({"status": "RUNNING"})
    assert seen == ["RUNNING", "WAITING", "RUNNING", "WAITING", "FAILED"]
    assert out["status"] == "FAILED"


def test_plan_is_replaced_only_by_a_newer_version() -> None:
    builder = StateGraph(RunState)
    builder.add_node("p2", lambda s: {"plan": {"version": 2, "steps": ["new"]}})
    builder.add_node("p1", lambda s: {"plan": {"version": 1, "steps": ["stale"]}})
    builder.add_edge(START, "p2")
    builder.add_edge("p2", "p1")
    builder.add_edge("p1", END)
    out = builder.compile().invoke({"plan": {"version": 1, "steps": ["old"]}})
    assert out["plan"] == {"version": 2, "steps": ["new"]}


def test_plain_fields_still_reject_concurrent_writes() -> None:
    # Sanity check of the harness: a field without a reducer is last-value, and two
    # parallel writes to it are an error, so the merges above are the reducers' doing.
    builder = StateGraph(RunState)
    builder.add_node("a", lambda s: {"output": "a"})
    builder.add_node("b", lambda s: {"output": "b"})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], END)
    with pytest.raises(InvalidUpdateError):
        builder.compile().invoke({})


# --------------------------------------------------------------------------- checkpoints


def test_merged_state_survives_a_checkpoint_and_a_second_invoke() -> None:
    graph = StateGraph(RunState)
    graph.add_node("a", _branch("a", "charge-a", evidence_as_list=True))
    graph.add_node("b", _branch("b", "charge-b", evidence_as_list=False))
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    graph.add_edge(["a", "b"], END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "run-1"}}
    app.invoke({}, config)
    # The same thread runs the same branches again: every charge and event is a replay.
    app.invoke({}, config)
    values = app.get_state(config).values
    assert values["budget"]["used"] == {"tool_calls": 2, "tokens_in": 20}
    assert values["events"]["count"] == 3
    assert set(values["results"]) == {"call-a", "call-b"}
