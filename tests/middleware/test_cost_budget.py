"""The ``cost_usd`` budget across a create_agent run: model replies priced from the usage
a provider reports (ChatOpenAI against the scripted OpenAI-compatible server on
127.0.0.1), and tool calls by the cost they declare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import ExecutorMiddleware, ScriptedChatModel, tool_spec
from execgraph.state.errors import UsageError
from tests.middleware.agents import Effects, agent, call, reply
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-cost"}}
PRICE = {"input_per_mtok": 2000.0, "output_per_mtok": 8000.0}  # dear, so one reply counts


def _chat(server: OpenAIServer, model: str = "gpt-4o-mini") -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test-key",  # type: ignore[arg-type]
        max_retries=0,
    )


def test_the_model_is_not_called_once_its_replies_cost_the_budget(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    logs = [tool_call("log_line", {"line": "a"}, id="call_a")]
    openai_server.add(tool_calls(*logs), text("never asked"))
    effects = Effects()
    app = agent(
        effects,
        _chat(openai_server),
        home=tmp_path,
        budgets={"cost_usd": 0.01},
        prices={"gpt-4o-mini": PRICE},
    )

    out = app.invoke({"messages": [("user", "log a")]}, CONFIG)

    assert effects.runs == {}  # the reply overspent the budget: nothing more is spent
    refused = next(m for m in out["messages"] if m.type == "tool")
    assert refused.status == "error" and "cost_usd" in refused.content
    assert len(openai_server.requests) == 1  # the second model call was never made
    status = out["execgraph_status"]
    assert status["status"] == "budget_exhausted" and status["exhausted"] == ["cost_usd"]
    used = status["used"]
    assert used["tokens_in"] > 0 and used["tokens_out"] > 0  # what the server reported
    priced = (used["tokens_in"] * 2000.0 + used["tokens_out"] * 8000.0) / 1_000_000
    assert used["cost_usd"] == pytest.approx(priced) and priced >= 0.01
    assert out["messages"][-1].content.startswith("Stopped: the run's budget is spent")


def test_a_reply_without_a_price_ends_a_run_with_a_cost_budget(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.add(tool_calls(tool_call("log_line", {"line": "a"}, id="call_a")), text("no"))
    effects = Effects()
    app = agent(
        effects,
        _chat(openai_server, model="gpt-unpriced"),
        home=tmp_path,
        budgets={"cost_usd": 100.0},
        prices={"gpt-4o-mini": PRICE},
    )

    out = app.invoke({"messages": [("user", "log a")]}, CONFIG)

    assert len(openai_server.requests) == 1
    status = out["execgraph_status"]
    assert status["exhausted"] == ["cost_usd"]
    assert status["used"]["unpriced_model_calls"] == 1 and "cost_usd" not in status["used"]


def test_a_tool_call_whose_declared_cost_does_not_fit_is_refused(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool_spec(effect="read", cost_usd=0.02)
    def lookup(query: str) -> str:
        """A paid lookup."""
        ran.append(query)
        return "found"

    both = reply(call("lookup", "call_1", query="a"), call("lookup", "call_2", query="b"))
    model = ScriptedChatModel([both, "never asked"])
    middleware = ExecutorMiddleware(
        home=tmp_path,
        tools=[lookup],
        budgets={"cost_usd": 0.03},
        prices={"scripted": {"input_per_mtok": 0.0, "output_per_mtok": 0.0}},  # free model
    )
    app = create_agent(
        model, tools=middleware.tools, middleware=[middleware], checkpointer=InMemorySaver()
    )

    out = app.invoke({"messages": [("user", "look up a and b")]}, CONFIG)

    assert ran == ["a"]  # the second call would have spent 0.04 of 0.03
    refused = next(m for m in out["messages"] if m.type == "tool" and m.tool_call_id == "call_2")
    assert refused.status == "error" and "cost_usd" in refused.content
    status = out["execgraph_status"]
    assert status["exhausted"] == ["cost_usd"]
    assert status["used"]["cost_usd"] == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("budgets", "prices", "why"),
    [
        ({"cost_usd": 1.0}, None, "needs the price"),
        ({"cost_usd": 1.0}, {"gpt-4o-mini": {"input_per_mtok": -1, "output_per_mtok": 0}}, ">= 0"),
    ],
)
def test_a_cost_budget_that_cannot_be_kept_is_refused_when_the_middleware_is_made(
    tmp_path: Path, budgets: dict[str, Any], prices: Any, why: str
) -> None:
    with pytest.raises(UsageError, match=why):
        ExecutorMiddleware(home=tmp_path, budgets=budgets, prices=prices)
