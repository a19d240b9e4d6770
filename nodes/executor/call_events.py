"""Events of one executor call: every id attached, logged to the store, ids returned to state."""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import Event, EventType, make_event

__all__ = ["call_event", "log_events"]


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


def log_events(deps: ExecutorDeps, events: list[Event]) -> dict[str, Any]:
    """Append ``events`` to the store; the ``events`` channel update naming them."""
    deps.store.append_events(events)
    return {"recent": [e.event_id for e in events]}
