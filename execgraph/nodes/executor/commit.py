"""Stage 10 — commit: one atomic store transaction, after which the model may observe.

Result, evidence, idempotency state, lock release and events are written together; if
another worker committed the same key first, its result is the one returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from execgraph.nodes.executor.outcome import error_of
from execgraph.nodes.executor.stages import Locked, Settled
from execgraph.state.contracts import (
    Outcome,
    SideEffect,
    Timing,
    ToolError,
    ToolExecutionRequest,
    ToolResult,
)
from execgraph.state.errors import ExecGraphError, ObservationStatus
from execgraph.state.events import Event
from execgraph.state.store.base import ExecutionStore

__all__ = ["build_result", "commit", "failure_result"]


def build_result(
    request: ToolExecutionRequest,
    tool_version: str,
    settled: Settled,
    *,
    key: str,
    attempt_id: str,
    queued_ms: int = 0,
    running_ms: int = 0,
    attempts: int = 1,
) -> ToolResult:
    """Assemble the ToolResult for a settled call."""
    return ToolResult(
        call_id=request.call_id,
        tool_name=request.tool.name,
        tool_version=tool_version,
        outcome=settled.outcome,
        status=settled.status,
        data=settled.data,
        error=settled.error,
        side_effect=settled.side_effect,
        evidence=list(settled.evidence),
        timing=Timing(queued_ms=queued_ms, running_ms=running_ms),
        truncated=settled.truncated,
        partial=settled.partial,
        idempotency_key=key,
        attempt_id=attempt_id,
        attempts=attempts,
        reconciled=settled.reconciled,
        tool_call_id=request.tool_call_id,
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


def commit(
    store: ExecutionStore,
    key: str,
    result: ToolResult,
    events: Sequence[Event],
    locked: Locked | None,
    *,
    durable: bool = True,
    fence: int | None = None,
) -> ToolResult:
    """Commit atomically; returns the committed result (the first commit of the key wins).

    ``durable=False`` (a read, safe to redo) does not wait for the disk flush. ``fence``
    commits only while this worker still holds the record (else FencedOut).
    """
    record = store.commit(
        key,
        result.model_dump(mode="json"),
        events=events,
        release=locked.keys if locked else (),
        owner=locked.owner if locked else "",
        durable=durable,
        fence=fence,
    )
    assert record.result is not None  # a committed record always carries its result
    return ToolResult.model_validate(record.result)
