"""Budgets per kind: what is used, what is left, what a step may spend.

Usage lives in the ``budget`` channel (added per kind by its reducer); limits in the
contract. Wall time is measured from the run's start, not charged: it reaches a running
call as its deadline (:func:`run_deadline`), so a call cannot outlive the run's time.
Cost is charged from a model turn's replies (``ModelTurn.charge``) and, per call that
ran, from what its tool declares (:func:`tool_charge`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from execgraph.state.contracts import BudgetKind, TaskContract, ToolResult
from execgraph.state.errors import ExecGraphError
from execgraph.tools.registry import ToolRegistry

__all__ = [
    "batch_misfit",
    "charge",
    "declared_cost",
    "exhausted",
    "remaining",
    "run_deadline",
    "tool_charge",
    "used",
]


def used(state: Mapping[str, Any]) -> dict[str, float]:
    """Usage per kind so far, wall time included."""
    usage = dict((state.get("budget") or {}).get("used", {}))
    started = state.get("started_at")
    if started:
        usage[BudgetKind.WALL_TIME_S.value] = time.time() - float(started)
    return usage


def remaining(contract: TaskContract, state: Mapping[str, Any], kind: BudgetKind) -> float | None:
    """What is left of ``kind`` (None: unlimited)."""
    limit = contract.budgets.get(kind)
    if limit is None:
        return None
    return limit - used(state).get(kind.value, 0)


def exhausted(contract: TaskContract, state: Mapping[str, Any]) -> list[str]:
    """Kinds whose limit is reached, plus ``deadline`` when the contract's deadline passed.

    A ``cost_usd`` limit is also reached by a reply of a model the price table does not
    know: from then on the budget could not see what the run spends.
    """
    out = [
        kind.value
        for kind in contract.budgets
        if (left := remaining(contract, state, kind)) is not None and left <= 0
    ]
    if BudgetKind.COST_USD in contract.budgets and "cost_usd" not in out:
        unpriced = int(used(state).get("unpriced_model_calls", 0))
        if unpriced:  # the budget cannot see what these replies cost: it is not kept
            out.append(f"cost_usd ({unpriced} model replies have no price in prices=)")
    if contract.deadline is not None and time.time() >= contract.deadline:
        out.append("deadline")
    return out


def run_deadline(contract: TaskContract, state: Mapping[str, Any]) -> float | None:
    """When the run's time is up (epoch seconds; None: never): the earlier of the
    contract's deadline and the end of the ``wall_time_s`` budget from ``started_at``."""
    ends = [contract.deadline] if contract.deadline is not None else []
    limit = contract.budgets.get(BudgetKind.WALL_TIME_S)
    started = state.get("started_at")
    if limit is not None and started:
        ends.append(float(started) + limit)
    return min(ends) if ends else None


def declared_cost(tools: Iterable[str], registry: ToolRegistry) -> float:
    """What calls of ``tools`` declare they cost (newest version; unknown tools: 0, the
    executor refuses them)."""
    total = 0.0
    for name in tools:
        try:
            total += registry.resolve(name).cost_usd
        except ExecGraphError:
            continue
    return total


def batch_misfit(
    contract: TaskContract, state: Mapping[str, Any], calls: int, cost_usd: float = 0.0
) -> str | None:
    """Why a batch of ``calls`` declaring ``cost_usd`` may not start now, or None.

    A batch is reserved whole: it fits the tool calls and the cost left, and the run has
    time left, or none of it starts. Its calls run side by side, each with the run's
    deadline as its own at the latest, so a batch that starts ends in the run's time.
    """
    left = remaining(contract, state, BudgetKind.TOOL_CALLS)
    if left is not None and calls > left:
        return f"a batch of {calls} tool calls does not fit the {left:g} left"
    left = remaining(contract, state, BudgetKind.COST_USD)
    if left is not None and (cost_usd > left or left < 0):
        return f"a batch declaring ${cost_usd:g} does not fit the ${max(left, 0):g} of cost left"
    if left is not None and used(state).get("unpriced_model_calls", 0):
        return "the model's replies have no price in prices=: the cost budget cannot be kept"
    deadline = run_deadline(contract, state)
    if deadline is not None and time.time() >= deadline:
        return "no wall time is left to start a batch of tool calls"
    return None


def tool_charge(result: ToolResult, cost_usd: float) -> dict[str, Any] | None:
    """What a call that ran costs beyond its queued tool call: ``cost_usd`` (what its
    resolved tool declares) per attempt, and one tool call per retry (None: nothing to
    charge).

    A call refused before it could run (resolve .. policy, a lock, a used token) has no
    adapter attempt and costs nothing; a replayed result charges the same id, once.
    """
    if result.attempt_id is None:
        return None
    retries = result.attempts - 1  # each retry is a tool call of its own
    if not cost_usd and not retries:
        return None
    return charge(f"{result.call_id}:cost", cost_usd=cost_usd * result.attempts, tool_calls=retries)


def charge(charge_id: str, **amounts: float) -> dict[str, Any]:
    """A budget update for the ``budget`` channel (replays of one charge id count once)."""
    return {"used": {k: v for k, v in amounts.items() if v}, "charges": [charge_id]}
