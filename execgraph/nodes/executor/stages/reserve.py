"""Stage 5 — reserve: the durable execution record, written before any side effect.

A committed record for the key is returned as is (idempotent replay); a started record
that never committed is another worker's call in flight, or one a crash cut short: the
pipeline waits for its owner or takes it over once its lease is gone
(:mod:`execgraph.nodes.executor.recovery.owner`) and reconciles it, never runs it
blindly. A new record is this worker's, with a lease (:mod:`execgraph.nodes.executor.record_lease`).

A write whose outcome ended ``unknown`` leaves a marker under its tool and normalized
arguments (:func:`mark_unresolved`), so an identical write of the same run is refused
(:func:`unresolved_twin`) until the first one is reconciled: a model that retries a write
whose response was lost would otherwise get a fresh key and do it twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from execgraph.nodes.executor import record_lease
from execgraph.nodes.executor.call import Authorized, Call
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import DomainViolation, ExecGraphError
from execgraph.state.events import Event
from execgraph.state.store.base import Claim, ExecutionRecord, ExecutionStore, Reservation
from execgraph.state.store.worker import worker_id

__all__ = [
    "Reserved",
    "claim",
    "idempotency_key",
    "mark_unresolved",
    "recorded",
    "reserve",
    "reserve_together",
    "twin_key",
    "unresolved_twin",
]


@dataclass(frozen=True)
class Reserved:
    """The idempotency reservation: fresh, already committed, or in doubt (crash)."""

    key: str
    kind: str  # "fresh" | "committed" | "in_doubt"
    record: ExecutionRecord


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


def recorded(request: ToolExecutionRequest, store: ExecutionStore) -> bool:
    """Whether this call already has an execution record (it passed the gate before)."""
    return store.get(idempotency_key(request)) is not None


def claim(call: Call) -> Claim:
    """The execution record ``call`` reserves."""
    authorized = call.cleared
    assert authorized is not None and call.key, "only an admitted call reserves"
    return Claim(
        key=call.key,
        run_id=call.request.run_id,
        call_id=call.request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        args_hash=authorized.validated.normalized.args_hash,
        requested_hash=authorized.validated.normalized.hash_before,
        attempt_id=call.attempt_id,
        owner=worker_id(),
        lease_s=record_lease.LEASE_S,
    )


def _reserved(claimed: Claim, reservation: Reservation) -> Reserved:
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


def _guards(call: Call) -> bool:
    """Whether the call's record guards an effect, so must be on disk before it runs (a
    read's record guards nothing: it need not wait for the flush)."""
    return call.spec.effect != "read"


def reserve(
    call: Call, reservation: Reservation | None = None, log: Sequence[Event] = ()
) -> Reserved:
    """Reserve the call's key (``log``, what led to it, in the same transaction), or read
    what ``reservation`` (a batch's, :func:`reserve_together`) means for it.

    Raises:
        DomainViolation: the key is already bound to another tool or other arguments.
    """
    claimed = claim(call)
    if reservation is None:
        [reservation] = call.deps.store.reserve_all([claimed], durable=_guards(call), log=log)
    return _reserved(claimed, reservation)


def reserve_together(
    store: ExecutionStore, calls: Sequence[Call], log: Sequence[Event] = ()
) -> list[Reservation | None]:
    """A batch's execution records in one store transaction, in order, with ``log``.

    One commit instead of one per call, and no call waits for the others' reservations
    to get through the store's lock. If the transaction fails, ``log`` is appended on its
    own and each call gets ``None`` and reserves on its own (reporting its own typed
    error).
    """
    if not calls:
        return []
    claims = [claim(call) for call in calls]
    durable = any(_guards(call) for call in calls)
    try:
        return list(store.reserve_all(claims, durable=durable, log=log))
    except ExecGraphError:
        if log:
            store.append_events(log, durable=False)
        return [None] * len(calls)


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
        requested_hash=normalized.hash_before,
        attempt_id="marker",
    )
    store.commit(key, result)
