"""A task that declares required slots asks for the missing ones at admission: before any
model or tool call, as a question a resume answers, and the answers reach the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.types import Command

from execgraph import ScriptedChatModel, build_graph, tool_spec

CONFIG: Any = {"configurable": {"thread_id": "ask-1"}}
FINISH = {"tool_calls": [{"name": "finish", "args": {"output": "booked"}}]}
TASK = {
    "goal": "Book a table.",
    "required_slots": {"city": "Which city?", "date": "For which date?"},
    "slots": {"date": "2026-12-24"},
}
ran: list[str] = []


@tool_spec(effect="read")
def search(q: str) -> str:
    """Search."""
    ran.append(q)
    return q


def test_missing_slots_are_asked_before_any_call(tmp_path: Path) -> None:
    model = ScriptedChatModel([FINISH])
    app = build_graph("react", model=model, tools=[search], home=tmp_path)
    out = app.invoke({"task": TASK}, CONFIG)
    assert out["status"] == "WAITING"
    (pending,) = out["__interrupt__"]
    assert pending.value["kind"] == "question" and pending.value["question"] == "Which city?"
    assert pending.value["slot"] == "city"
    assert model.remaining == 1 and ran == []  # nothing spent, nothing run
    assert app.get_state(CONFIG).values["status"] == "WAITING"
    out = app.invoke(Command(resume={"answer": "Lisbon"}), CONFIG)
    assert out["status"] == "COMPLETED"
    assert out["contract"]["slots"] == {"city": "Lisbon", "date": "2026-12-24"}
    assert "- city: Lisbon" in out["contract"]["goal"]
    assert out["budget"]["used"]["model_calls"] == 1  # the question cost no model call


def test_all_slots_given_asks_nothing(tmp_path: Path) -> None:
    model = ScriptedChatModel([FINISH])
    app = build_graph("react", model=model, tools=[search], home=tmp_path)
    out = app.invoke({"task": {**TASK, "slots": {"city": "Porto", "date": "today"}}}, CONFIG)
    assert out["status"] == "COMPLETED" and "- city: Porto" in out["contract"]["goal"]


def test_an_empty_answer_refuses_the_task(tmp_path: Path) -> None:
    model = ScriptedChatModel([FINISH])
    app = build_graph("react", model=model, tools=[search], home=tmp_path)
    app.invoke({"task": TASK}, CONFIG)
    out = app.invoke(Command(resume="  "), CONFIG)
    assert out["status"] == "FAILED" and "'city' was not answered" in out["error"]["message"]
    assert model.remaining == 1
