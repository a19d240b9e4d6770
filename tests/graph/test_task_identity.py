"""A resubmitted task keeps its identity: its committed writes are reused, not repeated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import Counter


def _script() -> list[AIMessage]:
    return [
        AIMessage("", tool_calls=[{"name": "charge", "args": {"cents": 500}, "id": "a"}]),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "x"}, "id": "b"}]),
        AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "paid"}, "id": "c"}]),
    ]


def _submit(tmp_path: Path, run_id: str, charged: Counter, looked: Counter, **task: Any) -> Any:
    @tool_spec(effect="write")
    def charge(cents: int) -> str:
        """Charge the customer's card."""
        charged.add(cents)
        return f"charged {cents}"

    @tool_spec(effect="read")
    def lookup(q: str) -> str:
        """Look something up."""
        looked.add(q)
        return "found"

    app = build_graph(
        "react",
        model=ScriptedChatModel(_script()),
        tools=[charge, lookup],
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    spec = {
        "goal": "charge 5 dollars",
        "success_checks": [{"kind": "tool_succeeded", "target": "charge"}],
        **task,
    }
    return app.invoke({"task": spec}, {"configurable": {"thread_id": run_id}})


def test_a_resubmitted_task_reuses_its_committed_write(tmp_path: Path) -> None:
    charged, looked = Counter(), Counter()
    first = _submit(tmp_path, "r1", charged, looked, idempotency_key="order-42")
    again = _submit(tmp_path, "r2", charged, looked, idempotency_key="order-42")
    assert first["status"] == again["status"] == "COMPLETED"
    assert charged.effects == [500]  # the second submission did not charge again
    [reused] = [r for r in again["results"].values() if r["tool_name"] == "charge"]
    assert reused["data"] == "charged 500" and reused["outcome"] == "succeeded"
    assert looked.effects == ["x", "x"]  # a read is the run's own: done again


def test_without_a_key_each_submission_is_a_new_request(tmp_path: Path) -> None:
    charged, looked = Counter(), Counter()
    _submit(tmp_path, "r1", charged, looked)
    _submit(tmp_path, "r2", charged, looked)
    assert charged.effects == [500, 500]
