"""Budget arithmetic: the run's deadline, whether a batch fits, what a call that ran costs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.nodes.budget import batch_misfit, run_deadline, tool_charge
from execgraph.state.contracts import (
    Actor,
    BudgetKind,
    Outcome,
    TaskContract,
    ToolResult,
    Workspace,
)
from execgraph.state.errors import ObservationStatus
from execgraph.tools import tool_spec


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


def test_the_runs_deadline_is_the_earlier_of_wall_time_and_the_contracts(tmp_path: Path) -> None:
    state: dict[str, Any] = {"started_at": 1000.0}
    assert run_deadline(_contract(tmp_path), state) is None
    assert run_deadline(_contract(tmp_path, wall_time_s=5), state) == 1005.0
    assert run_deadline(_contract(tmp_path, 1003.0, wall_time_s=5), state) == 1003.0
    assert run_deadline(_contract(tmp_path, 1009.0, wall_time_s=5), state) == 1005.0


def test_a_batch_does_not_start_without_time_left(tmp_path: Path) -> None:
    contract = _contract(tmp_path, wall_time_s=2)
    assert batch_misfit(contract, {"started_at": time.time()}, 3) is None
    reason = batch_misfit(contract, {"started_at": time.time() - 3}, 3)
    assert reason is not None and "wall time" in reason


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
    update = tool_charge(_result("a1"), paid.cost_usd)
    assert update == {"used": {"cost_usd": 0.25}, "charges": ["t1.c0:cost"]}


def test_a_refused_call_is_charged_nothing() -> None:
    assert tool_charge(_result(None), paid.cost_usd) is None
