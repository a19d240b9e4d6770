"""Stage 5 — reserve: the durable execution record, written before any side effect.

A committed record for the key is returned as is (idempotent replay); a started record
that never committed means a crash or a lost worker, and must be reconciled first.
"""

from __future__ import annotations

from typing import Any

from nodes.executor.results import Authorized, Reserved
from state.contracts import ToolExecutionRequest
from state.errors import DomainViolation
from state.store.base import Claim, ExecutionStore, Reservation

__all__ = [
    "claim",
    "idempotency_key",
    "mark_unresolved",
    "reserve",
    "reserved",
    "unresolved_twin",
]


def idempotency_key(request: ToolExecutionRequest) -> str:
    """The caller's key, or one derived from run and call ids (unique within a run)."""
    return request.idempotency_key or f"{request.run_id}:{request.call_id}"


def claim(request: ToolExecutionRequest, authorized: Authorized, attempt_id: str) -> Claim:
    """The execution record this call reserves."""
    return Claim(
        key=idempotency_key(request),
        run_id=request.run_id,
        call_id=request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        args_hash=authorized.validated.normalized.args_hash,
        attempt_id=attempt_id,
    )


def reserved(claimed: Claim, reservation: Reservation) -> Reserved:
    """What a reservation means for the call that claimed it.

    Raises:
        DomainViolation: the key is already bound to another tool or other arguments.
    """
    record = reservation.record
    if not reservation.fresh and (record.tool, record.args_hash) != (
        claimed.tool,
        claimed.args_hash,
    ):
        raise DomainViolation("idempotency key already used for a different call")
    if reservation.fresh:
        return Reserved(claimed.key, "fresh", record)
    kind = "committed" if record.state == "committed" else "in_doubt"
    return Reserved(claimed.key, kind, record)


def reserve(
    store: ExecutionStore, request: ToolExecutionRequest, authorized: Authorized, attempt_id: str
) -> Reserved:
    """Reserve the key for this call.

    Raises:
        DomainViolation: the key is already bound to another tool or other arguments.
    """
    claimed = claim(request, authorized, attempt_id)
    # A read has no effect for the record to guard: it need not wait for the disk.
    [reservation] = store.reserve_all([claimed], durable=authorized.spec.effect != "read")
    return reserved(claimed, reservation)


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
