"""``Runs``: the one way to reach a run, whichever engine holds it.

Two engines implement it: :class:`~execgraph.engines.embedded.EmbeddedRuns` (the run is
driven in this process, its state in a home's SQLite files or in PostgreSQL) and
:class:`~execgraph.engines.temporal.TemporalEngine` (the run is a Temporal workflow,
driven by workers). The command line reaches every run through this interface and only
parses arguments and prints; a Python caller can use it the same way.

Starting, answering and resuming return where the run stopped: at its end, or at a pause
``answerer`` did not answer. ``answerer(view)`` is asked at every pause and returns the
answers (:mod:`execgraph.engines.answers`), or None to leave the run waiting for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from execgraph.engines.spec import Answers, RunSpec, RunView

__all__ = ["Answerer", "RunRow", "Runs"]

Answerer = Callable[[RunView], Answers | None]
"""Answers a paused run (auto-approve, a person at a prompt), or None: leave it waiting."""


@dataclass(frozen=True)
class RunRow:
    """One line of a listing of runs."""

    run_id: str
    arch: str
    model: str
    created: float
    status: str


class Runs(Protocol):
    """Start, answer, cancel and read runs (see the module)."""

    @property
    def flags(self) -> str:
        """The command-line options that reach these runs again (for printed hints)."""
        ...

    @property
    def where(self) -> str:
        """Where these runs are, in words (``under /path``, ``on Temporal at ...``)."""
        ...

    def check(self, spec: RunSpec) -> None:
        """Refuse a spec this engine cannot start (before its task is even read): an
        unknown architecture, a run id that is no safe file name or already used, a tool
        set this engine does not know (where it can tell)."""
        ...

    def start(self, spec: RunSpec, *, answerer: Answerer | None = None) -> RunView:
        """Start ``spec``'s run; return where it stopped."""
        ...

    def answer(self, run_id: str, answers: Answers, *, answerer: Answerer | None = None) -> RunView:
        """Answer the interrupts the run waits on (refused when they are not pending)."""
        ...

    def resume(self, run_id: str, *, answerer: Answerer | None = None) -> RunView:
        """Continue a run that stopped short of its end (a killed process)."""
        ...

    def cancel(self, run_id: str, reason: str = "", *, call_id: str | None = None) -> RunView:
        """Stop the run: a running call sees it within a poll, a paused run ends now.
        With ``call_id``, stop only that call (its tool is signalled; a call pending
        approval is refused) and let the run go on with the call's outcome."""
        ...

    def status(self, run_id: str) -> RunView:
        """Where the run is."""
        ...

    def approval(self, run_id: str, call_id: str) -> dict[str, Any]:
        """The pending approval request of ``call_id``, every argument in full (a status
        may carry long arguments only as their size and hash)."""
        ...

    def events(self, run_id: str, after: int = 0) -> list[Any]:
        """The run's logged events, from the ``after``-th on."""
        ...

    def trace(self, run_id: str) -> Any:
        """A :class:`~execgraph.engines.reading.RunTrace`: events, evidence, final state."""
        ...

    def replay(self, run_id: str) -> Any:
        """Replay the recorded run (no model call, no effect): a ``ReplayReport``."""
        ...

    def reconcile(
        self, run_id: str, call_id: str, *, happened: bool, decided_by: str, note: str = ""
    ) -> Any:
        """Record a person's verdict on a call whose outcome is unknown: its ToolResult."""
        ...

    def runs(self) -> list[RunRow]:
        """Every run this engine can see, oldest first."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
