"""Cancel one call of a run, on any engine: the call's tool is told to stop, the run goes on.

The request is an event in the run's execution store
(:func:`~execgraph.nodes.cancel.request_call_cancel`), so whoever can reach the store can
log it: the embedded engine here, a Temporal worker for a run on Temporal. The process
running the call sees it within a poll, sets the call's cancel signal (a process tree is
killed, a connection closed), and the call settles with its truthful outcome: ``cancelled``
when nothing happened, ``unknown`` when a write may have acted. The model observes that
result and the run continues.

A call still waiting for a person's approval has not run: cancelling it answers its
approval with a refusal worded as a cancel (:func:`approval_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from execgraph.nodes.cancel import request_call_cancel
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store.base import ExecutionStore

__all__ = ["approval_refusal", "cancel_call", "pending_approval"]


def cancel_call(store: ExecutionStore, run_id: str, call_id: str, reason: str = "") -> bool:
    """Log a cancel request for the running call ``call_id`` of ``run_id`` (one whose
    execution record is written and not committed); False when one already was.

    Raises:
        UsageError: the call already ended (its outcome said), or the run has no such
            call running.
    """
    if any(record.call_id == call_id for record in store.pending(run_id)):
        return request_call_cancel(store, run_id, call_id, reason)
    ended = store.events(run_id, call_id=call_id, types=[EventType.TOOL_COMPLETED])
    if ended:
        outcome = ended[-1].payload.get("outcome")
        raise UsageError(f"call {call_id!r} already ended ({outcome}); nothing to cancel")
    raise UsageError(f"run {run_id!r} has no call {call_id!r} running (see execgraph status RUN)")


def pending_approval(interrupts: list[dict[str, Any]], call_id: str) -> str | None:
    """The id of the pending approval of ``call_id`` among ``interrupts``, if any."""
    for item in interrupts:
        value = item.get("value")
        if isinstance(value, Mapping) and value.get("call_id") == call_id:
            return str(item["id"])
    return None


def approval_refusal(reason: str) -> dict[str, Any]:
    """The answer that refuses a pending approval because its call was cancelled."""
    why = f"the call was cancelled: {reason}" if reason else "the call was cancelled"
    return {"action": "reject", "reason": why, "approver": "execgraph cancel"}
