"""What a tool receives and returns: the call's InvokeContext and its AdapterOutput.

The executor hands each call an :class:`InvokeContext` carrying the deadline, the
cancellation signal, the output budget, the trace ids and the fencing token, and expects
an :class:`AdapterOutput` back, or one of the typed errors of :mod:`execgraph.state.errors`.
A plain function tool, an adapter's tool and the executor all meet here.

The fencing token (``fence``) is the call's execution record's fence while this worker
holds it. A worker that stalled (a pause, a swap storm, ``SIGSTOP``) past its lease may
have been taken over by another that runs the same call; when it wakes, its tool may be
about to act. So a tool calls :meth:`InvokeContext.check_fence` right before its effect
(the built-in adapters do): a stale owner gets :class:`~execgraph.state.errors.FencedOut`
and acts on nothing. A resource that can refuse by itself is given the token too (the
HTTP adapter sends it with the idempotency key as headers), closing the gap between the
check and the effect.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from execgraph.state.contracts import Evidence, PartialProgress
from execgraph.state.errors import FencedOut

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


def _always_held() -> bool:
    return True


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
    #: The execution record's fencing token while this worker holds it (None: no record,
    #: as in a tool called outside the executor).
    fence: int | None = None
    #: Asks the execution store whether ``fence`` is still this worker's (one read).
    holds_fence: Callable[[], bool] = _always_held

    def check_fence(self) -> None:
        """Refuse to act for a stale owner: call it right before the effect.

        Raises:
            FencedOut: this worker's lease on the call (or on its run) was lost and
                another worker took it over; the call's cancel signal is set too.
        """
        if self.fence is None:
            return
        if not self.holds_fence():
            self.cancel.set()
            raise FencedOut(
                f"call {self.call_id!r} of run {self.run_id!r} was taken over by another "
                f"worker (this worker held fence {self.fence}); its effect is not made here"
            )

    def fence_headers(self) -> dict[str, str]:
        """The headers a resource can refuse a stale owner by: the idempotency key and,
        when the call has a record, its fence (``X-Execgraph-Fence``)."""
        headers = {"Idempotency-Key": self.idempotency_key} if self.idempotency_key else {}
        if self.fence is not None:
            headers["X-Execgraph-Fence"] = str(self.fence)
        return headers

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
    artifact: Any = None
    """What the tool returned for the application, not the model (a LangChain tool's
    ``content_and_artifact`` artifact): kept in the result, never in the model's input."""


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
