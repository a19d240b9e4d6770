"""The acceptance checks the high-risk tasks' specs share (the runtime's verifier sees
them; the tasks' own checkers judge the world)."""

from __future__ import annotations

from typing import Any

__all__ = ["states", "succeeded"]


def states(value: str) -> dict[str, Any]:
    """The answer states ``value``."""
    return {"kind": "output_contains", "value": value, "description": "the answer states it"}


def succeeded(tool: str) -> dict[str, Any]:
    """A call of ``tool`` succeeded."""
    return {"kind": "tool_succeeded", "target": tool, "description": f"{tool} succeeded"}
