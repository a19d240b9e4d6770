"""What crosses Temporal's wire: a run's spec, one advance of it, what it reached, a look.

Plain dataclasses of JSON values, so Temporal's default data converter carries them and
the workflows (which run in Temporal's sandbox, replayed from history) import nothing of
LangGraph. The run id is the workflow id and the LangGraph thread id: Temporal refuses a
second workflow with a running one's id, and the execution store a second worker driving
the thread. A worker reads only the fields it knows: anything else a client adds (a
path, an import reference) is dropped by the converter before a worker sees it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from execgraph.engines.spec import TERMINAL, RunSpec, RunView

__all__ = [
    "ARGUMENT_CHARS",
    "INTERRUPTS_CHARS",
    "INTERRUPT_CHARS",
    "TERMINAL",
    "TEXT_CHARS",
    "Advance",
    "Decision",
    "Look",
    "Reached",
    "RunSpec",
    "RunView",
    "carried",
    "cut",
]

ARGUMENT_CHARS = 4096
"""An argument of a pending call longer than this (as JSON) crosses the wire as its size
and hash only, when the call's request would be too long to carry: Temporal refuses a
payload above 2 MB, and a run may wait on several calls with large arguments. The whole
request is read from the run's checkpoint on demand (``TemporalRuns.approval``)."""

INTERRUPT_CHARS = 65536
"""The most one pending interrupt takes on the wire (see :func:`carried`)."""

INTERRUPTS_CHARS = 1048576
"""The most all of a run's pending interrupts take on the wire together."""

TEXT_CHARS = 262144
"""A run's output or error longer than this is cut on the wire (the run's state holds it
whole: ``execgraph trace``)."""


@dataclass(frozen=True)
class Advance:
    """One activity: drive ``spec``'s thread to its next pause or its end.

    ``answers`` resume a pause (interrupt id → resume value) and are applied only while
    those interrupts are still pending, so a retried advance never answers a later one.
    ``cancel`` ends the run: its pending approvals are refused, not run. ``expire`` ends
    the waits past their deadline (judged by the store's clock, on the worker) by their
    expiry policy; none past it, the run is reported as it is.
    """

    spec: RunSpec
    answers: dict[str, Any] | None = None
    cancel: bool = False
    expire: bool = False


@dataclass(frozen=True)
class Reached:
    """Where an advance left the run: its status, and the pauses a person must answer."""

    status: str
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    error: str = ""
    worker: str = ""

    @property
    def ended(self) -> bool:
        """Whether the run is over (nothing more will run)."""
        return self.status in TERMINAL and not self.interrupts


@dataclass(frozen=True)
class Decision:
    """A person's answers to pending interrupts (interrupt id → resume value), as the
    embedded engine takes them: ``{"action": "approve" | "reject" | "edit", ...}``, and
    the token signing them with the workers' approval key
    (:mod:`execgraph.engines.temporal.approvers`)."""

    answers: dict[str, Any]
    token: str = ""


@dataclass(frozen=True)
class Look:
    """A question about a run that a worker answers from the run's records.

    ``what``: ``"trace"`` (events, evidence, final state), ``"events"`` (from the
    ``after``-th), ``"replay"``, ``"reconcile"`` (``args``: happened, decided_by, note,
    call_id), ``"cancel_call"`` (``args``: call_id, reason) or ``"clock"`` (the store's
    time). ``spec`` is the run's, as its workflow holds it.
    """

    spec: RunSpec
    what: str
    args: dict[str, Any] = field(default_factory=dict)


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def _elide(value: dict[str, Any], longer_than: int) -> dict[str, Any]:
    arguments = dict(value.get("arguments") or {})
    elided = dict(value.get("elided") or {})
    for name, argument in list(arguments.items()):
        if name in elided:
            continue
        text = json.dumps(argument, sort_keys=True, default=str)
        if len(text) > longer_than:
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            elided[name] = {"chars": len(text), "sha256": digest}
            arguments[name] = None
    return {**value, "arguments": arguments, "elided": elided}


def _fits(interrupts: list[dict[str, Any]]) -> bool:
    each = all(_size(i) <= INTERRUPT_CHARS for i in interrupts)
    return each and _size(interrupts) <= INTERRUPTS_CHARS


def carried(interrupts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pending interrupts (``{"id", "value"}``) as they cross Temporal's wire: while they
    are too long, their calls' arguments longer than 4096, then 256 characters, then all
    of them, are replaced by ``None`` and listed under the value's ``elided`` (name →
    chars, sha256 of the JSON); the binding (``args_hash``) and the rest are kept."""
    shown = list(interrupts)
    for longer_than in (ARGUMENT_CHARS, 256, -1):
        if _fits(shown):
            break
        shown = [
            {**i, "value": _elide(i["value"], longer_than)}
            if isinstance(i.get("value"), dict) and isinstance(i["value"].get("arguments"), dict)
            else i
            for i in shown
        ]
    return shown


def cut(text: str) -> str:
    """A run's output or error as the wire carries it (at most :data:`TEXT_CHARS`)."""
    if len(text) <= TEXT_CHARS:
        return text
    return text[: TEXT_CHARS - 80] + f"… ({len(text)} characters in all; execgraph trace shows all)"
