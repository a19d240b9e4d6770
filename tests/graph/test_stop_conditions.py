"""The task's stop conditions, enforced by the stop controller in every architecture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.errors import PermanentError
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def flaky(query: str) -> str:
    """Search something that is down."""
    raise PermanentError("the index is down")


@tool_spec(effect="irreversible")
def wire_money(to: str) -> str:
    """Send money (a person must approve)."""
    return "sent"


def _call(name: str, args: dict[str, Any], i: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{i}"}])


def _run(tmp_path: Path, replies: list[Any], tools: list[Any], **task: Any) -> dict[str, Any]:
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=tools,
        checkpointer=InMemorySaver(),
        home=tmp_path,
        policy=[{"tool": "wire_money", "decision": "deny"}],
    )
    spec = {"goal": "g", "budgets": {"model_calls": 10}, **task}
    return app.invoke({"task": spec}, {"configurable": {"thread_id": "t"}})


def test_a_tool_that_failed_count_times_stops_the_run(tmp_path: Path) -> None:
    replies = [_call("flaky", {"query": f"q{i}"}, i) for i in range(6)]
    stop = [{"kind": "tool_failed", "target": "flaky", "count": 2}]
    out = _run(tmp_path, replies, [flaky], stop_conditions=stop)
    assert out["status"] == "FAILED"
    assert "stop condition: 2 flaky call(s) ended failed (limit 2)" in out["error"]["message"]
    assert out["budget"]["used"]["tool_calls"] == 2  # not one call more


def test_without_the_condition_the_same_run_goes_on_until_its_budget(tmp_path: Path) -> None:
    replies = [_call("flaky", {"query": f"q{i}"}, i) for i in range(12)]
    out = _run(tmp_path, replies, [flaky])
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["tool_calls"] > 2


def test_a_refusal_stops_the_run_instead_of_being_worked_around(tmp_path: Path) -> None:
    replies = [_call("wire_money", {"to": "mallory"}, i) for i in range(5)]
    out = _run(tmp_path, replies, [wire_money], stop_conditions=[{"kind": "denied"}])
    assert out["status"] == "FAILED"
    assert "stop condition: a call of wire_money was refused" in out["error"]["message"]
    assert out["budget"]["used"]["model_calls"] == 1


@pytest.mark.parametrize("bad", ["stop when done", {"kind": "tool_failed", "count": 0}])
def test_an_untyped_stop_condition_is_refused_before_any_model_call(
    tmp_path: Path, bad: Any
) -> None:
    out = _run(tmp_path, [], [flaky], stop_conditions=[bad])
    assert out["status"] == "FAILED"
    assert "stop_conditions" in out["error"]["message"]
