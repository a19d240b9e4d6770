"""Budget arithmetic: whether a batch fits, what a call that ran costs."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.nodes.budget import batch_misfit, tool_charge
from execgraph.state.contracts import (
    Actor,
    BudgetKind,
    Outcome,
    TaskContract,
    ToolResult,
    Workspace,
)
from execgraph.state.errors import ObservationStatus
from execgraph.tools import ToolRegistry, tool_spec


def _contract(tmp_path: Path, deadline: float | None = None, **budgets: float) -> TaskContract:
    return TaskContract(
        run_id="r",
        actor=Actor(),
        goal="g",
        deliverables=[],
        allowed_actions=["paid"],
        success_checks=[],
        stop_conditions=[],
        budgets={BudgetKind(k): v for k, v in budgets.items()},
        deadline=deadline,
        approval_rules=[],
        data_scope=[],
        workspace=Workspace(id="ws", root=str(tmp_path)),
    )


@pytest.mark.parametrize(("spent", "declared", "fits"), [(0.5, 0.5, True), (0.5, 0.6, False)])
def test_a_batch_must_fit_the_cost_left(
    tmp_path: Path, spent: float, declared: float, fits: bool
) -> None:
    state = {"budget": {"used": {"cost_usd": spent}, "charges": []}}
    reason = batch_misfit(_contract(tmp_path, cost_usd=1.0), state, 1, declared)
    assert (reason is None) is fits


def test_an_overspent_cost_budget_starts_not_even_a_free_batch(tmp_path: Path) -> None:
    state = {"budget": {"used": {"cost_usd": 1.5}, "charges": []}}
    assert batch_misfit(_contract(tmp_path, cost_usd=1.0), state, 1, 0.0) is not None


@tool_spec(effect="read", cost_usd=0.25)
def paid() -> str:
    """A paid lookup."""
    return "ok"


def _result(attempt_id: str | None) -> ToolResult:
    return ToolResult(
        call_id="t1.c0",
        tool_name="paid",
        tool_version="1.0.0",
        outcome=Outcome.SUCCEEDED if attempt_id else Outcome.FAILED,
        status=ObservationStatus.OK if attempt_id else ObservationStatus.DENIED,
        attempt_id=attempt_id,
    )


def test_a_call_that_ran_is_charged_its_tools_cost_once() -> None:
    update = tool_charge(_result("a1"), ToolRegistry([paid]))
    assert update == {"used": {"cost_usd": 0.25}, "charges": ["t1.c0:cost"]}


def test_a_refused_call_is_charged_nothing() -> None:
    assert tool_charge(_result(None), ToolRegistry([paid])) is None
