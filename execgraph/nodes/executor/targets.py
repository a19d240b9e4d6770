"""A call's targets: what it acts on, named as the evidence that observes it, and their state.

``ToolSpec.targets`` templates (``file:{path}``) are formatted with the normalized
arguments, like lock templates; ``ToolSpec.read_state`` answers each name with the
target's current state (a file's sha256). An approval records these states and a write
is guarded by what the run observed of them, so both compare like with like.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.state.errors import ExecGraphError, ToolRaised
from execgraph.tools.spec import ToolSpec

__all__ = ["read_state", "target_names", "target_state"]


def target_names(spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The spec's target templates formatted with ``arguments``, sorted.

    A template the call cannot fill (an optional argument left out) names no target: the
    call then has no state to show or guard, as a tool without ``targets``.
    """
    names = set()
    for template in spec.targets:
        try:
            names.add(template.format(**arguments))
        except (KeyError, IndexError, ValueError):
            continue
    return tuple(sorted(names))


def read_state(spec: ToolSpec, key: str, args: BaseModel, root: Path) -> str | None:
    """``spec.read_state`` for ``key``; a foreign exception from it becomes ``ToolRaised``.

    Raises:
        ExecGraphError: the hook's own typed error, or ``ToolRaised`` (text withheld).
    """
    if spec.read_state is None:
        return None
    try:
        return spec.read_state(key, args, root)
    except (ExecGraphError, GraphBubbleUp):
        raise
    except Exception as exc:
        raise ToolRaised.from_exception(exc) from None


def target_state(
    spec: ToolSpec, args: BaseModel, arguments: Mapping[str, Any], root: Path
) -> dict[str, str]:
    """The current state of each target the tool can read (targets it cannot are left out).

    Only an approval asks for this (one probe per target), never an ordinary call. A
    target whose state cannot be read now is left out, so it reads as changed once it can.
    """
    if spec.read_state is None or not spec.targets:
        return {}
    states: dict[str, str] = {}
    for name in target_names(spec, arguments):
        try:
            value = read_state(spec, name, args, root)
        except ExecGraphError:
            continue
        if value is not None:
            states[name] = value
    return states
