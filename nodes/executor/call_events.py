"""Events of one executor call, each carrying every id of the call (run, turn, decision, step)."""

from __future__ import annotations

from typing import Any

from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import Event, EventType, make_event

__all__ = ["call_event"]


def call_event(request: ToolExecutionRequest, type: EventType, **kw: Any) -> Event:
    """An event of ``request``'s call carrying run, turn, decision, call and step ids."""
    return make_event(
        type,
        request.run_id,
        call_id=request.call_id,
        turn_id=request.turn_id,
        decision_id=request.decision_id,
        step_id=request.step_id,
        **kw,
    )
