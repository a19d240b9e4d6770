"""Events of one executor call, each carrying every id of the call (run, turn, decision, step)."""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor.argument_size import logged_arguments
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import Event, EventType, make_event

__all__ = ["call_event"]


def call_event(request: ToolExecutionRequest, type: EventType, **kw: Any) -> Event:
    """An event of ``request``'s call carrying run, turn, decision, call and step ids.

    A ``tool.requested`` event holds the call's arguments only within the run's bound: a
    call refused as too large is logged with its size, not stored by its own refusal.
    """
    payload = kw.get("payload")
    if type is EventType.TOOL_REQUESTED and payload and "arguments" in payload:
        logged = logged_arguments(payload["arguments"], request.max_argument_bytes)
        if logged is not payload["arguments"]:
            kw["payload"] = {**payload, "arguments": logged}
    return make_event(
        type,
        request.run_id,
        call_id=request.call_id,
        turn_id=request.turn_id,
        decision_id=request.decision_id,
        step_id=request.step_id,
        **kw,
    )
