"""Stage 5 — reserve: the durable execution record, written before any side effect.

A committed record for the key is returned as is (idempotent replay); a started record
that never committed means a crash or a lost worker, and must be reconciled first.
"""

from __future__ import annotations

from typing import Any

from nodes.executor.results import Authorized, Reserved
from state.contracts import ToolExecutionRequest
from state.errors import DomainViolation
from state.store.base import ExecutionStore

__all__ = ["idempotency_key", "mark_unresolved", "reserve", "unresolved_twin"]


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
        # A read has no effect for the record to guard: it need not wait for the disk.
        durable=spec.effect != "read",
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


def _twin_key(run_id: str, tool: str, args_hash: str) -> str:
    return f"{run_id}:unresolved:{tool}:{args_hash}"


def unresolved_twin(
    store: ExecutionStore, request: ToolExecutionRequest, authorized: Authorized
) -> str | None:
    """The call id of an identical earlier write in this run whose outcome is unknown.

    A model that retries a write whose response was lost would otherwise get a fresh key
    and do it twice; the earlier call must be reconciled first.
    """
    spec, normalized = authorized.spec, authorized.validated.normalized
    if spec.effect == "read":
        return None
    record = store.get(_twin_key(request.run_id, spec.name, normalized.args_hash))
    if record is None or record.result is None or record.call_id == request.call_id:
        return None
    return record.call_id if record.result.get("outcome") == "unknown" else None


def mark_unresolved(
    store: ExecutionStore,
    request: ToolExecutionRequest,
    authorized: Authorized,
    result: dict[str, Any],
) -> None:
    """Remember a write that ended ``unknown`` so an identical retry is refused."""
    spec, normalized = authorized.spec, authorized.validated.normalized
    key = _twin_key(request.run_id, spec.name, normalized.args_hash)
    store.reserve(
        key,
        run_id=request.run_id,
        call_id=request.call_id,
        tool=spec.name,
        version=spec.version,
        args_hash=normalized.args_hash,
        attempt_id="marker",
    )
    store.commit(key, result)
