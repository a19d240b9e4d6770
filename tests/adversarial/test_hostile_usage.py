"""What a model reports of its own usage, and a cost budget it could not see, never loosen a
budget: a reply reporting negative or non-finite tokens is refused (the call is charged,
nothing is refunded), and a ``cost_usd`` budget needs the model's price."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from execgraph import build_graph, tool_spec
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(120)


@tool_spec(effect="read")
def lookup(item: str) -> str:
    """Look an item up."""
    return f"{item}: found"


def _lookup(i: int, usage: dict[str, Any] | None) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "lookup", "args": {"item": f"i{i}"}, "id": f"c{i}"}],
        usage_metadata=usage,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("key", ["input_tokens", "output_tokens"])
def test_a_reply_reporting_negative_tokens_gets_no_refund(tmp_path: Path, key: str) -> None:
    # (LangChain's AIMessage already refuses a count that is not a finite number)
    usage = {"input_tokens": 60, "output_tokens": 5, "total_tokens": 0, key: -60}
    model = ScriptedChatModel([_lookup(i, usage) for i in range(40)])
    app = build_graph("react", model=model, tools=[lookup], home=tmp_path)
    task = {"goal": "look things up", "budgets": {"tokens_in": 100, "tokens_out": 100}}
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "usage"}})
    assert out["status"] in ("FAILED", "BUDGET_EXHAUSTED"), out["status"]
    assert out["budget"]["used"].get("tokens_in", 0) >= 0
    assert len(model.calls) <= 3  # an honest model is stopped after 2 such calls
    assert not any(r["tool_name"] == "lookup" for r in out["results"].values())


def test_a_cost_budget_without_a_price_table_is_refused_at_admission(tmp_path: Path) -> None:
    model = ScriptedChatModel([_lookup(0, None)])
    app = build_graph("react", model=model, tools=[lookup], home=tmp_path)
    task = {"goal": "look", "budgets": {"cost_usd": 0.000001}}
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "cost"}})
    assert out["status"] == "FAILED"
    assert "prices=" in out["error"]["message"]
    assert model.calls == []


def test_a_reply_of_a_model_the_price_table_does_not_know_ends_a_cost_budget(
    tmp_path: Path,
) -> None:
    other = {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}
    model = ScriptedChatModel([_lookup(i, None) for i in range(5)])
    app = build_graph("react", model=model, tools=[lookup], home=tmp_path, prices=other)
    task = {"goal": "look", "budgets": {"cost_usd": 0.000001}}
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "cost"}})
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert "no price" in out["error"]["message"]
    assert len(model.calls) == 1
