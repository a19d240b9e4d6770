"""Cancellation from anywhere: a cancel request is an event in the run's log.

Any process that can reach the execution store may ask a run to stop. A running tool call
sees the request within a poll interval (its cancel signal is set, so a process group is
killed or a page closed), and the verifier stops the run CANCELLED at the end of the turn.

One call can be cancelled alone (:func:`request_call_cancel`): its tool is signalled the
same way, the call settles with its truthful outcome (``cancelled`` when nothing happened,
``unknown`` when a write may have acted), the model observes it, and the run goes on. The
request names the call's cancellation token: its ``ToolExecutionRequest.cancellation_token``
where one was given, else its call id.
"""

from __future__ import annotations

from execgraph.state.events import EventType, make_event
from execgraph.state.store.base import ExecutionStore

__all__ = ["call_cancel_requested", "cancel_requested", "request_call_cancel", "request_cancel"]


def request_cancel(store: ExecutionStore, run_id: str, reason: str = "") -> bool:
    """Log a cancel request for ``run_id``; False when one was already logged."""
    event = make_event(EventType.RUN_CANCEL_REQUESTED, run_id, payload={"reason": reason})
    return bool(store.append_events([event]))


def cancel_requested(store: ExecutionStore, run_id: str) -> bool:
    """Whether someone asked ``run_id`` to stop."""
    return store.has_event(run_id, EventType.RUN_CANCEL_REQUESTED)


def _call_cancel_id(run_id: str, token: str) -> str:
    """The id of the one cancel request a call's ``token`` can have (a second is a no-op)."""
    return make_event(EventType.CALL_CANCEL_REQUESTED, run_id, call_id=token).event_id


def request_call_cancel(store: ExecutionStore, run_id: str, token: str, reason: str = "") -> bool:
    """Log a cancel request for the call of ``run_id`` whose cancellation token (by
    default its call id) is ``token``; False when one was already logged.

    The run is not cancelled: only that call's tool is told to stop.
    """
    payload = {"reason": reason, "token": token}
    event = make_event(EventType.CALL_CANCEL_REQUESTED, run_id, call_id=token, payload=payload)
    return bool(store.append_events([event]))


def call_cancel_requested(store: ExecutionStore, run_id: str, token: str) -> str | None:
    """The reason someone asked the call with cancellation token ``token`` to stop
    (``""`` when they gave none), or None when nobody did (one lookup by id)."""
    event = store.event(_call_cancel_id(run_id, token))
    return None if event is None else str(event.payload.get("reason") or "")
