"""Cancellation from anywhere: a cancel request is an event in the run's log.

Any process that can reach the execution store may ask a run to stop. A running tool call
sees the request within a poll interval (its cancel signal is set, so a process group is
killed or a page closed), and the verifier stops the run CANCELLED at the end of the turn.
"""

from __future__ import annotations

from execgraph.state.events import EventType, make_event
from execgraph.state.store.base import ExecutionStore

__all__ = ["cancel_requested", "request_cancel"]


def request_cancel(store: ExecutionStore, run_id: str, reason: str = "") -> bool:
    """Log a cancel request for ``run_id``; False when one was already logged."""
    event = make_event(EventType.RUN_CANCEL_REQUESTED, run_id, payload={"reason": reason})
    return bool(store.append_events([event]))


def cancel_requested(store: ExecutionStore, run_id: str) -> bool:
    """Whether someone asked ``run_id`` to stop."""
    return store.has_event(run_id, EventType.RUN_CANCEL_REQUESTED)
