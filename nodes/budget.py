"""Budgets per kind: what is used, what is left, what a step may spend.

Usage lives in the ``budget`` channel (added per kind by its reducer); limits in the
contract. Wall time is measured from the run's start, not charged.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from execgraph.state.contracts import BudgetKind, TaskContract

__all__ = ["charge", "exhausted", "remaining", "used"]


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
    """Kinds whose limit is reached, plus ``deadline`` when the contract's deadline passed."""
    out = [
        kind.value
        for kind in contract.budgets
        if (left := remaining(contract, state, kind)) is not None and left <= 0
    ]
    if contract.deadline is not None and time.time() >= contract.deadline:
        out.append("deadline")
    return out


def charge(charge_id: str, **amounts: float) -> dict[str, Any]:
    """A budget update for the ``budget`` channel (replays of one charge id count once)."""
    return {"used": {k: v for k, v in amounts.items() if v}, "charges": [charge_id]}
