"""What crosses Temporal's wire: a run's spec, one advance of it, what it reached, a look.

Plain dataclasses of JSON values, so Temporal's default data converter carries them and
the workflows (which run in Temporal's sandbox, replayed from history) import nothing of
LangGraph. The run id is the workflow id and the LangGraph thread id: Temporal refuses a
second workflow with a running one's id, and the execution store a second worker driving
the thread. A worker reads only the fields it knows: anything else a client adds (a
path, an import reference) is dropped by the converter before a worker sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from execgraph.engines.spec import TERMINAL, RunSpec, RunView

__all__ = ["TERMINAL", "Advance", "Decision", "Look", "Reached", "RunSpec", "RunView"]


@dataclass(frozen=True)
class Advance:
    """One activity: drive ``spec``'s thread to its next pause or its end.

    ``answers`` resume a pause (interrupt id → resume value) and are applied only while
    those interrupts are still pending, so a retried advance never answers a later one.
    ``cancel`` ends the run: its pending approvals are refused, not run.
    """

    spec: RunSpec
    answers: dict[str, Any] | None = None
    cancel: bool = False


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
    embedded engine takes them: ``{"action": "approve" | "reject" | "edit", ...}``."""

    answers: dict[str, Any]


@dataclass(frozen=True)
class Look:
    """A question about a run that a worker answers from the run's records.

    ``what``: ``"trace"`` (events, evidence, final state), ``"events"`` (from the
    ``after``-th), ``"replay"`` or ``"reconcile"`` (``args``: happened, decided_by, note,
    call_id). ``spec`` is the run's, as its workflow holds it.
    """

    spec: RunSpec
    what: str
    args: dict[str, Any] = field(default_factory=dict)
