"""The planner's node returns its own update and a stop's as one, both counted."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def look(i: int) -> str:
    """Look at item i."""
    return f"saw {i}"


def test_a_planner_that_aborts_counts_its_model_call_and_the_stop(tmp_path: Path) -> None:
    abort = [{"name": "abort", "args": {"reason": "no way"}, "id": "a"}]
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "plan_execute",
        model=ScriptedChatModel([AIMessage(content="", tool_calls=abort)]),
        tools=[look],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    task = {
        "task": {"goal": "go", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}
    }
    final = app.invoke(task, {"configurable": {"thread_id": "abort"}})
    assert final["status"] == "FAILED"
    logged = [e for e in store.events("abort") if e.type != EventType.STATE_CHECKPOINTED]
    assert {EventType.MODEL_CALLED, EventType.RUN_FINISHED} <= {e.type for e in logged}
    assert final["events"]["count"] == len(logged)
    assert set(final["events"]["recent"]) == {e.event_id for e in logged}
