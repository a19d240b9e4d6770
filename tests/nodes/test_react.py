"""A ReAct turn returns its steps' updates as one, folded by the schema's reducers: a
turn wider than the state's windows still counts every event and reports every result."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.events import EventType
from execgraph.state.reducers import REPLAY_WINDOW, RESULTS_WINDOW
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

WIDE = RESULTS_WINDOW + 4


@tool_spec(effect="read")
def look(i: int) -> str:
    """Look at item i."""
    return f"saw {i}"


def test_a_turn_wider_than_the_windows_keeps_every_result_and_event_counted(
    tmp_path: Path,
) -> None:
    calls = [{"name": "look", "args": {"i": i}, "id": f"k{i}"} for i in range(WIDE)]
    finish = [{"name": "finish", "args": {"output": "done"}, "id": "f"}]
    model = ScriptedChatModel(
        [AIMessage(content="", tool_calls=calls), AIMessage(content="", tool_calls=finish)]
    )
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react", model=model, tools=[look], store=store, checkpointer=InMemorySaver(), home=tmp_path
    )
    cfg = {"configurable": {"thread_id": "wide"}}
    task = {
        "task": {
            "goal": "look at everything",
            "success_checks": [{"kind": "tool_succeeded", "target": "look"}],
            "budgets": {"tool_calls": 2 * WIDE},
        }
    }
    updates = list(app.stream(task, cfg, stream_mode="updates"))
    [turn] = [u["decide"] for u in updates if "results" in (u.get("decide") or {})]
    assert len(turn["results"]) == WIDE  # the turn's one update: all of its calls
    assert len(turn["events"]["recent"]) > REPLAY_WINDOW
    final = app.get_state(cfg).values
    assert final["status"] == "COMPLETED"
    assert len(final["results"]) == RESULTS_WINDOW  # the channel windows them once
    # none lost, none twice (a checkpoint's own event is the checkpointer's, not state's)
    logged = [e for e in store.events("wide") if e.type != EventType.STATE_CHECKPOINTED]
    assert final["events"]["count"] == len(logged)
