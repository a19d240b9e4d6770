"""What a tool receives and returns: the call's InvokeContext and its AdapterOutput.

The executor hands each call an :class:`InvokeContext` carrying the deadline, the
cancellation signal, the output budget and the trace ids, and expects an
:class:`AdapterOutput` back, or one of the typed errors of :mod:`execgraph.state.errors`.
A plain function tool, an adapter's tool and the executor all meet here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from execgraph.state.contracts import Evidence, PartialProgress

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "AdapterOutput",
    "InvokeContext",
    "attach_output",
    "output_of",
]

DEFAULT_OUTPUT_BUDGET = 64 * 1024


def _no_emit(kind: str, payload: dict[str, Any]) -> None:
    return None


def _no_artifacts(data: bytes, kind: str) -> str:
    raise RuntimeError("no artifact store attached to this context")


@dataclass(frozen=True)
class InvokeContext:
    """Everything an adapter may use besides the validated arguments."""

    run_id: str
    call_id: str
    attempt_id: str
    workspace_root: Path
    idempotency_key: str = ""
    deadline: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    output_budget: int = DEFAULT_OUTPUT_BUDGET
    data_scope: tuple[str, ...] = ()
    trace: dict[str, str] = field(default_factory=dict)
    emit: Callable[[str, dict[str, Any]], None] = _no_emit
    put_artifact: Callable[[bytes, str], str] = _no_artifacts
    tool_call_id: str | None = None
    """The model's id for the call (what ``InjectedToolCallId`` receives, as under
    LangGraph's ``ToolNode``); None for a call no model made."""

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (None: no deadline; never negative)."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.time())


@dataclass(frozen=True)
class AdapterOutput:
    """What an adapter observed. ``committed`` None means it cannot tell."""

    data: Any = None
    committed: bool | None = None
    summary: str = ""
    evidence: tuple[Evidence, ...] = ()
    truncated: bool = False
    partial: PartialProgress | None = None


E = TypeVar("E", bound=BaseException)


def attach_output(error: E, output: AdapterOutput) -> E:
    """Hang what was observed before a failure on a typed error as ``.output``.

    The error tree's classes take only a message; the executor still shows the model the
    bounded streams, status and evidence of a failed call, so they travel on the instance.
    """
    error.__dict__["output"] = output
    return error


def output_of(error: BaseException) -> AdapterOutput | None:
    """What an adapter observed before raising ``error`` (None if nothing was observed)."""
    output = error.__dict__.get("output")
    return output if isinstance(output, AdapterOutput) else None
