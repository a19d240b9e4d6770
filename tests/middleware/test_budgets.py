"""Budgets across a create_agent run, and the end state the caller reads."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import ExecutorMiddleware, ScriptedChatModel
from execgraph.state.errors import UsageError
from tests.middleware.agents import Effects, agent, call, reply

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-1"}}
TWO_LOGS = reply(call("log_line", "call_a", line="a"), call("log_line", "call_b", line="b"))


def test_a_call_past_the_tool_call_budget_is_refused_and_the_run_ends(tmp_path: Path) -> None:
    effects = Effects()
    model_replies = [TWO_LOGS, "never asked"]
    app = agent(effects, model_replies, home=tmp_path, budgets={"tool_calls": 1})

    out = app.invoke({"messages": [("user", "log twice")]}, CONFIG)

    assert effects.runs == {"log_line:a": 1}  # the model's first call, in its order
    refused = next(m for m in out["messages"] if m.type == "tool" and m.tool_call_id == "call_b")
    assert refused.status == "error" and "BudgetExhausted" in refused.content
    status = out["execgraph_status"]
    assert status["status"] == "budget_exhausted" and status["exhausted"] == ["tool_calls"]
    assert status["used"]["tool_calls"] == 1 and status["limits"] == {"tool_calls": 1.0}
    assert out["messages"][-1].content.startswith("Stopped: the run's budget is spent")


def test_the_model_is_not_called_past_its_budget(tmp_path: Path) -> None:
    effects = Effects()
    app = agent(effects, [TWO_LOGS, "never asked"], home=tmp_path, budgets={"model_calls": 1})

    out = app.invoke({"messages": [("user", "log twice")]}, CONFIG)

    assert effects.runs == {"log_line:a": 1, "log_line:b": 1}
    assert out["execgraph_status"]["exhausted"] == ["model_calls"]
    assert out["execgraph_status"]["used"]["model_calls"] == 1


def test_a_run_within_its_budgets_ends_completed(tmp_path: Path) -> None:
    effects = Effects()
    app = agent(effects, [TWO_LOGS, "logged"], home=tmp_path, budgets={"tool_calls": 5})

    out = app.invoke({"messages": [("user", "log twice")]}, CONFIG)

    assert out["messages"][-1].content == "logged"
    assert out["execgraph_status"]["status"] == "completed"
    assert out["execgraph_status"]["used"]["tool_calls"] == 2
    assert out["execgraph_status"]["used"]["model_calls"] == 2


def test_the_wall_time_budget_is_each_tool_calls_deadline(tmp_path: Path) -> None:
    @tool
    def slow_lookup(query: str) -> str:
        """Look something up, slowly."""
        time.sleep(8)
        return "found"

    slow_lookup.metadata = {"effect": "read"}
    model = ScriptedChatModel([reply(call("slow_lookup", "call_s", query="q")), "never"])
    middleware = ExecutorMiddleware(home=tmp_path, budgets={"wall_time_s": 0.5})
    app = create_agent(
        model, tools=[slow_lookup], middleware=[middleware], checkpointer=InMemorySaver()
    )
    started = time.monotonic()

    out = app.invoke({"messages": [("user", "look it up")]}, CONFIG)

    # stopped at the deadline (and the executor's grace for a stop), not after 8 s
    assert time.monotonic() - started < 5
    answer = next(m for m in out["messages"] if m.type == "tool")
    assert answer.status == "error"
    assert out["execgraph_status"]["exhausted"] == ["wall_time_s"]


@pytest.mark.parametrize("budgets", [{"steps": 3}, {"tool_calls": 0}, {"tool_calls": "ten"}])
def test_a_budget_that_cannot_work_is_refused_when_the_middleware_is_made(
    tmp_path: Path, budgets: dict[str, Any]
) -> None:
    with pytest.raises(UsageError, match="budget"):
        ExecutorMiddleware(home=tmp_path, budgets=budgets)
