"""Stage 5 — reserve: the durable execution record, written before any side effect.

A committed record for the key is returned as is (idempotent replay); a started record
that never committed is another worker's call in flight, or one a crash cut short: the
caller waits for its owner or takes it over once its lease is gone (lease.py) and
reconciles it, never runs it blindly. A new record is this worker's, with a lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from execgraph.nodes.executor import lease
from execgraph.nodes.executor.stages import Authorized, Reserved, Staged
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import DomainViolation, ExecGraphError
from execgraph.state.events import Event
from execgraph.state.store.base import Claim, ExecutionStore, Reservation
from execgraph.state.store.worker import worker_id

__all__ = [
    "claim",
    "idempotency_key",
    "mark_unresolved",
    "reserve",
    "reserve_together",
    "reserved",
    "twin_key",
    "unresolved_twin",
]


def idempotency_key(request: ToolExecutionRequest, authorized: Authorized | None = None) -> str:
    """The call's record key: the caller's own key; for a write of a task submitted with
    an idempotency key, the task's key with the tool and the normalized arguments (the
    same write of a resubmitted task finds the first one's record); else the run and call
    ids (unique within a run). A read is always the run's own: redoing it is safe."""
    if request.idempotency_key:
        return request.idempotency_key
    if request.task_key and authorized is not None and authorized.spec.effect != "read":
        spec, normalized = authorized.spec, authorized.validated.normalized
        return f"task:{request.task_key}:{spec.name}:{normalized.args_hash}"
    return f"{request.run_id}:{request.call_id}"


def claim(request: ToolExecutionRequest, authorized: Authorized, attempt_id: str) -> Claim:
    """The execution record this call reserves."""
    return Claim(
        key=idempotency_key(request, authorized),
        run_id=request.run_id,
        call_id=request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        args_hash=authorized.validated.normalized.args_hash,
        attempt_id=attempt_id,
        owner=worker_id(),
        lease_s=lease.LEASE_S,
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
    store: ExecutionStore,
    request: ToolExecutionRequest,
    authorized: Authorized,
    attempt_id: str,
    log: Sequence[Event] = (),
) -> Reserved:
    """Reserve the key for this call (``log``, what led to it, in the same transaction).

    Raises:
        DomainViolation: the key is already bound to another tool or other arguments.
    """
    claimed = claim(request, authorized, attempt_id)
    lease.begin(attempt_id)  # live in this process from before its record exists
    [reservation] = store.reserve_all([claimed], durable=_guards(authorized), log=log)
    return reserved(claimed, reservation)


def _guards(authorized: Authorized) -> bool:
    """Whether the call's record guards an effect, so must be on disk before it runs (a
    read's record guards nothing: it need not wait for the flush)."""
    return authorized.spec.effect != "read"


def reserve_together(
    store: ExecutionStore, staged: Sequence[Staged], log: Sequence[Event] = ()
) -> list[Reservation | None]:
    """A batch's execution records in one store transaction, in order, with ``log``.

    One commit instead of one per call, and no call waits for the others' reservations
    to get through the store's lock. If the transaction fails, ``log`` is appended on its
    own and each call gets ``None`` and reserves on its own (reporting its own typed
    error).
    """
    claims = [claim(s.request, s.authorized, s.attempt_id) for s in staged]
    for one in staged:
        lease.begin(one.attempt_id)
    durable = any(_guards(s.authorized) for s in staged)
    try:
        return list(store.reserve_all(claims, durable=durable, log=log))
    except ExecGraphError:
        if log:
            store.append_events(log, durable=False)
        return [None] * len(staged)


def twin_key(run_id: str, tool: str, args_hash: str) -> str:
    """The key of the marker an unknown write leaves, so an identical write is refused."""
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
    record = store.get(twin_key(request.run_id, spec.name, normalized.args_hash))
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
    key = twin_key(request.run_id, spec.name, normalized.args_hash)
    store.reserve(
        key,
        # Not the run's own id: the marker is found by its key, and must not count as a
        # second call in the run's record (``committed``, ``outcomes``).
        run_id=f"{request.run_id}:unresolved",
        call_id=request.call_id,
        tool=spec.name,
        version=spec.version,
        args_hash=normalized.args_hash,
        attempt_id="marker",
    )
    store.commit(key, result)
