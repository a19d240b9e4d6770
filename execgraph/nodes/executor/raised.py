"""What a call's tool code raised, kept for the developer: a ``tool.raised`` event and a
warning on the ``execgraph.executor`` logger, never the ToolResult the model reads.

The tool itself (``invoke``), its read-after-write check (``verify``) and its reconcile
probe (``reconcile``) run code execgraph did not write; what they raise is told to the
model only as a fixed, typed message, so its type, message and traceback would be lost
without this record (bounded and scrubbed by :mod:`execgraph.state.diagnostics`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from execgraph.nodes.executor.call_events import call_event
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.diagnostics import describe, logger
from execgraph.state.events import Event, EventType

__all__ = ["Raised", "Report", "Stage"]

Stage = Literal["invoke", "verify", "reconcile"]
"""Where tool code raised: the tool, its verify check, or its reconcile probe."""

Report = Callable[[Stage, BaseException], None]
"""Records that tool code raised at a stage (a :class:`Raised`)."""

_log = logger("executor")


@dataclass
class Raised:
    """Appends one ``tool.raised`` event per exception to a call's event list, and logs it."""

    request: ToolExecutionRequest
    attempt_id: str
    tool: str
    sink: list[Event]
    _seen: Counter[str] = field(default_factory=Counter, init=False, repr=False)

    def __call__(self, stage: Stage, exc: BaseException) -> None:
        self._seen[stage] += 1
        n = self._seen[stage]  # a probe may run twice in one attempt (crash, then unknown)
        described = describe(exc)
        self.sink.append(
            call_event(
                self.request,
                EventType.TOOL_RAISED,
                attempt_id=self.attempt_id,
                seq=stage if n == 1 else f"{stage}-{n}",
                payload={"stage": stage, "tool": self.tool, **described},
            )
        )
        _log.warning(
            "%s raised %s in %s (run %s, call %s): %s\n%s",
            self.tool,
            described["type"],
            stage,
            self.request.run_id,
            self.request.call_id,
            described["message"],
            described["traceback"],
        )
