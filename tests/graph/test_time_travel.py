"""LangGraph time travel on a run: a fork of an old checkpoint replays, it does not re-decide.

``app.invoke(None, config_with_checkpoint_id)`` and ``update_state`` on an old checkpoint
re-run the turns after it under the same thread id, so the same run id: each turn's model
reply is the one the event log holds for that turn (looked up by its deterministic event
id, as after a crash) and each call's result the one its execution record holds. Nothing
is asked of the model again and no effect happens twice; to decide anew, start a new
thread. (Documented in :mod:`execgraph.persistence.thread_bound`.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import Counter

TASK = {
    "goal": "Write one note.",
    "success_checks": [{"kind": "tool_succeeded", "target": "note"}],
}


def turn(name: str, args: dict[str, Any], i: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": i}])


@pytest.fixture
def ran(tmp_path: Path) -> tuple[Any, ScriptedChatModel, Counter, SqliteExecutionStore]:
    """A react run that wrote note 'first' and finished; the script has a different second
    try ('second') left over, which a re-decision would use."""
    written = Counter()

    @tool_spec(effect="write")
    def note(text: str) -> str:
        """Write a note."""
        written.add(text)
        return f"noted {text}"

    model = ScriptedChatModel(
        [
            turn("note", {"text": "first"}, "a"),
            turn("finish", {"output": "noted first"}, "b"),
            turn("note", {"text": "second"}, "c"),
            turn("finish", {"output": "noted second"}, "d"),
        ]
    )
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react", model=model, tools=[note], store=store, checkpointer=InMemorySaver(), home=tmp_path
    )
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": "t"}})
    assert out["status"] == "COMPLETED" and written.effects == ["first"]
    return app, model, written, store


def _before_first_turn(app: Any) -> Any:
    history = list(app.get_state_history({"configurable": {"thread_id": "t"}}))
    return next(s for s in history if s.next == ("decide",) and s.values.get("turn") == 0)


def _replies(store: SqliteExecutionStore) -> int:
    return sum(1 for e in store.events("t") if e.type == "model.called")


def test_a_fork_replays_the_logged_decisions_and_results(ran: Any) -> None:
    app, model, written, store = ran
    fork = _before_first_turn(app)
    out = app.invoke(None, fork.config)
    assert out["status"] == "COMPLETED" and out["output"] == "noted first"
    assert model.remaining == 2  # the model was not asked again
    assert written.effects == ["first"]  # the write was not done again
    assert _replies(store) == 2


def test_update_state_on_an_old_checkpoint_does_not_reach_a_logged_turn(ran: Any) -> None:
    app, model, written, _ = ran
    fork = _before_first_turn(app)
    steer = {"feedback": [{"id": "steer", "turn": 0, "text": "write 'second' instead"}]}
    changed = app.update_state(fork.config, steer)
    out = app.invoke(None, changed)
    assert out["output"] == "noted first"  # the logged reply, not a new decision
    assert any(f["text"] == steer["feedback"][0]["text"] for f in out["feedback"])
    assert model.remaining == 2 and written.effects == ["first"]


def test_a_new_thread_decides_anew(ran: Any) -> None:
    app, model, written, _ = ran
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": "t-again"}})
    assert out["output"] == "noted second"
    assert model.remaining == 0 and written.effects == ["first", "second"]
