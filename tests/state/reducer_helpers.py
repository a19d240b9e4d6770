"""Builders shared by the reducer tests (evidence, budget charges, results, plans)."""

from __future__ import annotations

from typing import Any

TERMINAL = ["COMPLETED", "FAILED", "CANCELLED", "BUDGET_EXHAUSTED", "PARTIAL"]
NON_TERMINAL = ["RUNNING", "WAITING"]


def ev(source_id: str, value: Any = "v", version: int | None = 1, **extra: Any) -> dict:
    """One evidence dict as the executor writes it (``Evidence.model_dump(mode="json")``)."""
    item: dict[str, Any] = {"source_id": source_id, "kind": "file_hash", "value": value}
    if version is not None:
        item["version"] = version
    item.update(extra)
    return item


def charge(charges: list[str], **used: float) -> dict[str, Any]:
    """A budget update carrying its charge ids."""
    return {"used": dict(used), "charges": list(charges)}


def result(call_id: str, outcome: str = "succeeded", **extra: Any) -> dict[str, Any]:
    """A ToolResult dict, reduced to what the results reducer looks at."""
    return {"call_id": call_id, "tool_name": "t", "outcome": outcome, **extra}


def plan(version: int | None, *steps: str) -> dict[str, Any]:
    """A plan dict, optionally versioned."""
    out: dict[str, Any] = {"steps": list(steps)}
    if version is not None:
        out["version"] = version
    return out
