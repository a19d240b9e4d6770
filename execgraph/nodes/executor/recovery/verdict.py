"""A person's verdict on an ``unknown`` outcome: the call happened, or it did not.

A write whose response was lost is ``unknown`` and is never blindly retried: the tool's
``reconcile`` probe settles it when the tool has one. When it has none, only someone who
can look at the world (the payment provider's dashboard, the recipient's inbox) can say.
Their verdict is recorded as an event naming who decided, and replaces the unknown in the
call's record: *happened* commits the call as succeeded; *did not happen* leaves it failed
and clears the marker that refused an identical write, so the write is safe to run again.
"""

from __future__ import annotations

from execgraph.nodes.executor.stages.reserve import twin_key
from execgraph.state.contracts import Outcome, SideEffect, ToolError, ToolResult
from execgraph.state.errors import ObservationStatus, Phase, UsageError
from execgraph.state.events import EventType, make_event
from execgraph.state.store.base import ExecutionRecord, ExecutionStore

__all__ = ["reconcile"]


def _record(store: ExecutionStore, run_id: str, call_id: str) -> ExecutionRecord:
    record = store.get(f"{run_id}:{call_id}")
    if record is None:  # a caller-chosen idempotency key: look the call up in the run
        record = next((r for r in store.committed(run_id) if r.call_id == call_id), None)
    if record is None or record.result is None:
        raise UsageError(f"run {run_id!r} has no committed call {call_id!r}")
    if record.result.get("outcome") != "unknown":
        raise UsageError(
            f"call {call_id!r} of run {run_id!r} is {record.result.get('outcome')!r}, "
            "not unknown: there is nothing to settle"
        )
    return record


def reconcile(
    store: ExecutionStore,
    run_id: str,
    call_id: str,
    *,
    happened: bool,
    decided_by: str,
    note: str = "",
) -> ToolResult:
    """Record a person's verdict on a call whose outcome is unknown; return its new result.

    Raises:
        UsageError: the call does not exist or its outcome is not unknown.
    """
    record = _record(store, run_id, call_id)
    old = ToolResult.model_validate(record.result)
    who = decided_by.strip() or "unknown person"
    if happened:
        settled = old.model_copy(
            update={
                "outcome": Outcome.SUCCEEDED,
                "status": ObservationStatus.OK,
                "error": None,
                "side_effect": SideEffect(
                    attempted=True, committed=True, summary=f"{who} confirmed it took effect"
                ),
                "reconciled": True,
            }
        )
    else:
        settled = old.model_copy(
            update={
                "outcome": Outcome.FAILED,
                "status": ObservationStatus.RETRYABLE_ERROR,
                "error": ToolError(
                    type="ResponseLostError",
                    phase=Phase.EXECUTE,
                    retryable=True,
                    message=f"{who} confirmed it took no effect; it is safe to run again",
                ),
                "side_effect": SideEffect(
                    attempted=True, committed=False, summary=f"{who} confirmed no effect"
                ),
                "reconciled": True,
            }
        )
    event = make_event(
        EventType.TOOL_SETTLED,
        run_id,
        call_id=call_id,
        payload={"happened": happened, "decided_by": who, "note": note[:1000]},
    )
    body = settled.model_dump(mode="json")
    store.settle_unknown(record.idempotency_key, body, events=[event])
    marker = store.get(twin_key(run_id, record.tool, record.args_hash))
    if marker is not None and (marker.result or {}).get("outcome") == "unknown":
        store.settle_unknown(marker.idempotency_key, body)
    return settled
