"""Stage 5 — reserve: the durable execution record, written before any side effect.

A committed record for the key is returned as is (idempotent replay); a started record
that never committed means a crash or a lost worker, and must be reconciled first.
"""

from __future__ import annotations

from nodes.executor.results import Authorized, Reserved
from state.contracts import ToolExecutionRequest
from state.errors import DomainViolation
from state.store.base import ExecutionStore

__all__ = ["idempotency_key", "reserve"]


def idempotency_key(request: ToolExecutionRequest) -> str:
    """The caller's key, or one derived from run and call ids (unique within a run)."""
    return request.idempotency_key or f"{request.run_id}:{request.call_id}"


def reserve(
    store: ExecutionStore, request: ToolExecutionRequest, authorized: Authorized, attempt_id: str
) -> Reserved:
    """Reserve the key for this call.

    Raises:
        DomainViolation: the key is already bound to another tool or other arguments.
    """
    key = idempotency_key(request)
    spec, normalized = authorized.spec, authorized.validated.normalized
    reservation = store.reserve(
        key,
        run_id=request.run_id,
        call_id=request.call_id,
        tool=spec.name,
        version=spec.version,
        args_hash=normalized.args_hash,
        attempt_id=attempt_id,
    )
    record = reservation.record
    if not reservation.fresh and (record.tool, record.args_hash) != (
        spec.name,
        normalized.args_hash,
    ):
        raise DomainViolation("idempotency key already used for a different call")
    if reservation.fresh:
        return Reserved(key, "fresh", record)
    return Reserved(key, "committed" if record.state == "committed" else "in_doubt", record)
