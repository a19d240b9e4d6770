"""What names a run and what a run looks like from outside, on any engine.

Plain dataclasses of JSON values: the embedded engine returns them, and Temporal carries
them on its wire unchanged (its default data converter reads and writes dataclasses), so
the workflow, which Temporal replays in its sandbox, imports nothing of LangGraph.

A run is named, never described as code: ``tools`` is the name of a tool set the engine
(a worker, or this process) registered (:mod:`execgraph.engines.graphs`), ``model`` a
model name (``"offline"``, or ``"provider:model"``), and a run's workspace is derived
from its validated id by whoever runs it. Nothing a client sends chooses an import path
or a directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CANCELLED", "DEFAULT_TOOLS", "TERMINAL", "Answers", "RunSpec", "RunView"]

TERMINAL = ("COMPLETED", "FAILED", "PARTIAL", "BUDGET_EXHAUSTED", "CANCELLED", "TERMINATED")
"""The statuses a run ends in (``TERMINATED``: its Temporal workflow was ended from
outside); ``WAITING`` pauses it for a person."""

DEFAULT_TOOLS = "demo"
"""The tool set a spec names when it names none (registered by :mod:`execgraph.demo`)."""

CANCELLED = "the run was cancelled"
"""The reason a cancel gives every call it turns down before it ran."""

Answers = dict[str, Any]
"""Resume values by pending interrupt id: ``{"action": "approve" | "reject" | "edit",
...}`` for an approval, ``{"answer": "..."}`` for a question."""


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to build a run's graph, as names (any worker can).

    ``tools`` names a registered tool set (default: the demo's); ``model`` is
    ``"offline"`` (the demo's scripted policy) or ``"provider:model"``.
    """

    run_id: str
    task: dict[str, Any]
    arch: str = "react"
    model: str = "offline"
    tools: str = DEFAULT_TOOLS


@dataclass(frozen=True)
class RunView:
    """Where a run is, and what waits on a person.

    ``interrupts`` are ``{"id": ..., "value": {...}}``: an approval request or a question.
    What only one engine knows is optional: the state's ``values`` and the ``driver`` (the
    process driving it) on the embedded engine, the ``advances`` made on Temporal; ``spec``
    is None for a run started from Python (its graph is not recorded by name).
    """

    run_id: str
    status: str
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    error: str = ""
    advances: int = 0
    spec: RunSpec | None = None
    values: dict[str, Any] | None = None
    driver: int | None = None
    workspace: str = ""

    @property
    def ended(self) -> bool:
        """Whether the run is over (nothing more will run)."""
        return self.status in TERMINAL and not self.interrupts

    @property
    def waiting(self) -> bool:
        """Whether the run waits for a person's answer."""
        return bool(self.interrupts)

    def pending(self) -> frozenset[str]:
        """The ids of the interrupts the run waits on."""
        return frozenset(str(i["id"]) for i in self.interrupts)
