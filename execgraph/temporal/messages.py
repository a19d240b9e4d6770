"""What crosses Temporal's wire: a run's spec, one advance of it, and what it reached.

Plain dataclasses of JSON values, so Temporal's default data converter carries them and
the workflow (which runs in Temporal's sandbox, replayed from history) imports nothing
of LangGraph. The run id is the workflow id and the LangGraph thread id: Temporal refuses
a second workflow with a running one's id, and the execution store a second worker
driving the thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "TERMINAL",
    "Advance",
    "Decision",
    "Reached",
    "RunSpec",
    "RunView",
]

TERMINAL = ("COMPLETED", "FAILED", "PARTIAL", "BUDGET_EXHAUSTED", "CANCELLED")
"""The statuses a run ends in; ``WAITING`` pauses it for a person."""


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to build a run's graph, as names (any worker can).

    ``model`` is ``"offline"`` (the demo's policy) or ``"provider:model"``; ``tools`` a
    ``module:attr`` reference importable on every worker (None: the demo's tools);
    ``workspace`` a directory every worker reaches (None: the worker's own, per run).
    """

    run_id: str
    task: dict[str, Any]
    arch: str = "react"
    model: str = "offline"
    tools: str | None = None
    workspace: str | None = None


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
class RunView:
    """The workflow's answer to ``status``: where the run is, and what waits on a person."""

    run_id: str
    status: str
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    advances: int = 0
    output: str = ""
    error: str = ""
