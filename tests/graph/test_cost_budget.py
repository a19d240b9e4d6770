"""The cost budget: model replies priced from the user's table, tools at their declared cost.

Every architecture runs on real SQLite with a scripted model (it reports ``model_name``
"scripted" and token usage, as a provider does) and the fake adapter's ``lookup`` and
``save``, here declaring a cost per call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from execgraph.graph import build_graph
from execgraph.state.errors import UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.fake import FakeAdapter
from tests.reliability.replies import call, finish, lookup, save
from tests.reliability.scenarios import ARCHS, STAGES, TASK, budget_tool_calls

PRICES = {"scripted": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}
FREE = {"scripted": {"input_per_mtok": 0.0, "output_per_mtok": 0.0}}  # tools' costs alone


def _run(
    tmp_path: Path,
    arch: str,
    replies: list[Any],
    budgets: dict[str, float],
    *,
    costs: dict[str, float] | None = None,
    prices: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], FakeAdapter, ScriptedChatModel]:
    fake = FakeAdapter()
    fake.tool("lookup", effect="read")
    fake.tool("save", effect="write", verify="pass")
    tools = [s.with_(cost_usd=(costs or {}).get(s.name, 0.0)) for s in fake.tools()]
    model = ScriptedChatModel(replies)
    app = build_graph(
        arch,
        model=model,
        tools=tools,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        workspace=tmp_path / "ws",
        home=tmp_path,
        stages=STAGES,
        prices=prices,
    )
    task = {**TASK, "budgets": {**TASK["budgets"], **budgets}}
    try:
        out = app.invoke({"task": task}, {"configurable": {"thread_id": f"cost-{arch}"}})
    finally:
        fake.close()
    return out, fake, model


def _priced(used: dict[str, float]) -> float:
    entry = PRICES["scripted"]
    return (
        used["tokens_in"] * entry["input_per_mtok"] + used["tokens_out"] * entry["output_per_mtok"]
    ) / 1_000_000


@pytest.mark.parametrize("arch", ARCHS)
def test_a_tight_cost_budget_is_spent_by_the_models_replies(tmp_path: Path, arch: str) -> None:
    """The first reply (a turn's, or the planner's) overspends 1e-6 USD: nothing runs."""
    out, fake, model = _run(
        tmp_path, arch, budget_tool_calls(arch).replies, {"cost_usd": 0.000001}, prices=PRICES
    )
    assert out["status"] == "BUDGET_EXHAUSTED"
    used = out["budget"]["used"]
    assert used["cost_usd"] == pytest.approx(_priced(used))
    assert used["cost_usd"] > 0.000001
    assert "unpriced_model_calls" not in used
    assert fake.call_count() == 0  # the batch of the overspending turn never started
    assert len(model.calls) == used["model_calls"]


def test_a_reply_of_a_model_without_a_price_ends_a_cost_budget(tmp_path: Path) -> None:
    other = {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}
    out, fake, model = _run(
        tmp_path, "react", [lookup(), save(), finish()], {"cost_usd": 0.000001}, prices=other
    )
    assert out["status"] == "BUDGET_EXHAUSTED"  # the budget cannot see what it would cost
    assert "no price" in out["error"]["message"]
    used = out["budget"]["used"]
    assert used.get("cost_usd", 0) == 0
    assert used["unpriced_model_calls"] == used["model_calls"] == len(model.calls) == 1
    assert fake.call_count() == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_tools_are_charged_their_declared_cost_and_a_batch_must_fit(
    tmp_path: Path, arch: str
) -> None:
    """lookup (0.25) runs; the batch of two saves (0.5 each) does not fit the 0.75 left."""
    out, fake, _ = _run(
        tmp_path,
        arch,
        budget_tool_calls(arch).replies,
        {"cost_usd": 1.0},
        costs={"lookup": 0.25, "save": 0.5},
        prices=FREE,
    )
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert "does not fit" in out["error"]["message"]
    assert out["budget"]["used"]["cost_usd"] == pytest.approx(0.25)
    assert fake.call_count("lookup") == 1 and fake.call_count("save") == 0


def test_a_refused_call_costs_nothing(tmp_path: Path) -> None:
    replies = [call("lookup", {"item": "a", "extra": 1}), lookup(), save(), finish()]
    out, fake, _ = _run(tmp_path, "react", replies, {}, costs={"lookup": 0.25})
    assert out["status"] == "COMPLETED"
    refused = [r for r in out["results"].values() if r["status"] != "OK"]
    assert [r["error"]["type"] for r in refused] == ["SchemaViolation"]
    assert out["budget"]["used"]["tool_calls"] == 3
    assert out["budget"]["used"]["cost_usd"] == pytest.approx(0.25)  # only the call that ran
    assert fake.call_count("lookup") == 1


def test_tool_cost_stops_the_run_once_spent(tmp_path: Path) -> None:
    """Three single lookups at 0.4 under 1.0: two run, the third does not fit."""
    replies = [lookup("a"), lookup("b"), lookup("c")]
    out, fake, _ = _run(
        tmp_path, "react", replies, {"cost_usd": 1.0}, costs={"lookup": 0.4}, prices=FREE
    )
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["cost_usd"] == pytest.approx(0.8)
    assert fake.call_count("lookup") == 2


@pytest.mark.parametrize(
    "prices",
    [
        {"m": {"input_per_mtok": 1.0}},
        {"m": {"input_per_mtok": 1.0, "output_per_mtok": 1.0, "cached_per_mtok": 0.5}},
        {"m": {"input_per_mtok": -1.0, "output_per_mtok": 1.0}},
        {"m": {"input_per_mtok": "0.15", "output_per_mtok": 1.0}},
        {"m": {"input_per_mtok": float("nan"), "output_per_mtok": 1.0}},
    ],
)
def test_a_malformed_price_table_is_a_usage_error(tmp_path: Path, prices: Any) -> None:
    with pytest.raises(UsageError, match="prices"):
        build_graph("react", model=ScriptedChatModel([]), tools=[], home=tmp_path, prices=prices)
