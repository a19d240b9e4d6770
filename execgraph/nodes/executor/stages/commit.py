"""Stage 10 — commit: one atomic store transaction, after which the model may observe.

The call's result, its evidence, its idempotency state, its locks' release and its events
(``tool.completed`` last) are written together, and only while this worker still holds
the record (its fence); if another worker committed the same key first, its result is
the one returned. A write that ended ``unknown`` is remembered, so an identical write is
refused until it is reconciled (:func:`~execgraph.nodes.executor.stages.reserve.mark_unresolved`).

A call that never reached its record has nothing to commit: a refusal's events are
appended with its end (:func:`log_refusal`). A call whose record was committed earlier
(a replay, another worker's commit) ends with that result (:func:`committed_before`).
Either way the model observes the call only after this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from execgraph.nodes.executor.call import Call
from execgraph.nodes.executor.stages.lock import Locked
from execgraph.nodes.executor.stages.outcome import Settled, error_of
from execgraph.nodes.executor.stages.reserve import mark_unresolved
from execgraph.state.contracts import (
    Outcome,
    SideEffect,
    Timing,
    ToolError,
    ToolExecutionRequest,
    ToolResult,
)
from execgraph.state.errors import ExecGraphError, ObservationStatus
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import ExecutionRecord
from execgraph.tools.spec import ToolSpec

__all__ = [
    "Finished",
    "build_result",
    "commit",
    "committed_before",
    "failure_result",
    "log_refusal",
]


@dataclass(frozen=True)
class Finished:
    """One call's end: its ToolResult (run, refused, or committed earlier), the ids of the
    events logged for it, and the tool it resolved to (None: refused before that). A node
    turns it into its update; nothing before does."""

    result: ToolResult
    event_ids: tuple[str, ...]
    spec: ToolSpec | None = None
    dumped: dict[str, Any] | None = None
    """``result`` as JSON, when the commit already made it (so nothing dumps it twice)."""


def build_result(
    call: Call,
    settled: Settled,
    *,
    queued_ms: int = 0,
    running_ms: int = 0,
    attempts: int = 1,
) -> ToolResult:
    """The ToolResult of a settled call."""
    request = call.request
    return ToolResult(
        call_id=request.call_id,
        tool_name=request.tool.name,
        tool_version=call.spec.version,
        outcome=settled.outcome,
        status=settled.status,
        data=settled.data,
        error=settled.error,
        side_effect=settled.side_effect,
        evidence=list(settled.evidence),
        timing=Timing(queued_ms=queued_ms, running_ms=running_ms),
        truncated=settled.truncated,
        partial=settled.partial,
        idempotency_key=call.key,
        attempt_id=call.attempt_id,
        attempts=attempts,
        reconciled=settled.reconciled,
        tool_call_id=request.tool_call_id,
        artifact=settled.artifact,
    )


def failure_result(
    request: ToolExecutionRequest,
    error: ExecGraphError | ToolError,
    *,
    status: ObservationStatus | None = None,
    tool_version: str = "",
) -> ToolResult:
    """The result of a call refused before any side effect (resolve .. policy, locks)."""
    if isinstance(error, ExecGraphError):
        status, error = error.status, error_of(error)
    return ToolResult(
        call_id=request.call_id,
        tool_name=request.tool.name,
        tool_version=tool_version,
        outcome=Outcome.FAILED,
        status=status or ObservationStatus.PERMANENT_ERROR,
        error=error,
        side_effect=SideEffect(attempted=False, committed=False, summary="not executed"),
        tool_call_id=request.tool_call_id,
    )


def _completed(call: Call, result: ToolResult) -> Event:
    return call.events.record(
        EventType.TOOL_COMPLETED,
        attempt_id=result.attempt_id,
        payload={"outcome": result.outcome, "status": result.status, **_stopped(result)},
    )


def _stopped(result: ToolResult) -> dict[str, object]:
    """For a partial result: how many items committed and are pending, and where its
    recovery starts (what ``execgraph trace`` shows)."""
    partial = result.partial
    if partial is None:
        return {}
    ref = partial.recovery_ref.ref if partial.recovery_ref is not None else None
    return {
        "committed_items": len(partial.committed),
        "pending_items": len(partial.pending),
        "recovery_ref": ref,
    }


def _spec(call: Call) -> ToolSpec | None:
    return call.authorized.spec if call.authorized is not None else None


def log_refusal(call: Call, result: ToolResult, log: Sequence[Event] = ()) -> Finished:
    """End a call refused before any record was reserved: ``log`` (what led to it), its
    events and its end, appended."""
    _completed(call, result)
    events = call.events.recorded()
    call.deps.store.append_events([*log, *events])
    return Finished(result, tuple(e.event_id for e in [*log, *events]), _spec(call))


def commit(call: Call, result: ToolResult, locked: Locked | None) -> Finished:
    """Commit ``result`` with the call's events atomically, releasing ``locked``; returns
    the committed call (the first commit of the key wins).

    Raises:
        FencedOut: this worker's lease on the record lapsed and another took it over.
    """
    _completed(call, result)
    events = call.events.recorded()
    # A read is safe to redo, so its commit need not wait for the disk; anything that may
    # have changed the world is flushed before the model can observe it.
    body = result.model_dump(mode="json")
    record = call.deps.store.commit(
        call.key,
        body,
        events=events,
        release=locked.keys if locked else (),
        owner=locked.owner if locked else "",
        durable=call.spec.effect != "read",
        fence=call.fence,
    )
    assert record.result is not None  # a committed record always carries its result
    if record.result != body:  # another commit of the key came first: its result stands
        result, body = ToolResult.model_validate(record.result), record.result
    if result.outcome == "unknown" and call.authorized is not None:
        mark_unresolved(call.deps.store, call.request, call.authorized, body)
    return Finished(result, tuple(e.event_id for e in events), call.spec, body)


def committed_before(call: Call, record: ExecutionRecord) -> Finished:
    """End a call whose record was committed before (a replay, another worker's commit):
    its events appended, that result returned as this call's."""
    assert record.result is not None
    events = call.events.recorded()
    call.deps.store.append_events(events)  # already logged, unless another worker committed
    committed = ToolResult.model_validate(record.result)
    if record.call_id != call.request.call_id or record.run_id != call.request.run_id:
        # The same write of a resubmitted task: its first submission's result, as this
        # call's (it is not done again).
        update = {"call_id": call.request.call_id, "tool_call_id": call.request.tool_call_id}
        committed = committed.model_copy(update=update)
    return Finished(committed, tuple(e.event_id for e in events), _spec(call))
