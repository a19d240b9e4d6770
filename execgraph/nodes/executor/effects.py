"""The executor's effectful half: reserve → lock → invoke → outcome → evidence → commit.

No side effect starts before the durable execution record exists; a record found started
but uncommitted is another worker's call in flight (waited for, never run again: lease.py)
or, once its owner is gone, one a crash cut short (taken over and reconciled, never
blindly run again); one store transaction commits result, evidence, idempotency state,
lock release and events, and only while this worker still holds the record (its fence).

Here: the order of the stages. Each step's own logic lives in its module: the tool's
context (:mod:`.call_context`), a takeover (:mod:`.taken_over`), the attempts and their
retries (:mod:`.attempts`), the end of a call (:mod:`.finish`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from execgraph.nodes.executor import lease
from execgraph.nodes.executor.abandoned import hold_until_ended
from execgraph.nodes.executor.attempts import run_attempts
from execgraph.nodes.executor.call_context import call_context
from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.commit import build_result, failure_result
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.finish import finish, finish_unreserved
from execgraph.nodes.executor.gate import Gate
from execgraph.nodes.executor.lease import await_owner
from execgraph.nodes.executor.lock import acquire, lock_keys
from execgraph.nodes.executor.raised import Raised
from execgraph.nodes.executor.reserve import claim, reserve, reserved, unresolved_twin
from execgraph.nodes.executor.stages import Finished, Staged
from execgraph.nodes.executor.taken_over import settle_taken_over
from execgraph.state.contracts import ToolExecutionRequest, ToolResult
from execgraph.state.errors import (
    ApprovalTokenInvalid,
    DomainViolation,
    ExecGraphError,
    UnresolvedOutcome,
)
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import Reservation
from execgraph.state.store.worker import worker_id

__all__ = ["execute", "run_staged", "stage"]


def execute(
    request: ToolExecutionRequest, gate: Gate, deps: ExecutorDeps, log: Sequence[Event] = ()
) -> Finished:
    """Reserve, lock, invoke, settle, gather evidence and commit — or commit a refusal.

    The gate's events are committed with the call's own, in its commit transaction;
    ``log`` (what led to the call) with its first write, before anything runs.
    """
    staged = stage(request, gate, deps, log)
    return run_staged(staged, deps, log=log) if isinstance(staged, Staged) else staged


def stage(
    request: ToolExecutionRequest, gate: Gate, deps: ExecutorDeps, log: Sequence[Event] = ()
) -> Staged | Finished:
    """The gate's authorized call, ready for its execution record; a refusal is logged
    (after ``log``) and returned as finished.

    Nothing is resolved or validated again: the gate's ``Authorized`` is what runs, with
    its normalized arguments, hashes, confined paths and policy rule.
    """
    authorized = gate.cleared
    if authorized is None:
        refused = gate.failure or DomainViolation("the call was never authorized")
        return finish_unreserved(
            request, deps, failure_result(request, refused), [*log, *gate.events]
        )
    try:
        twin = unresolved_twin(deps.store, request, authorized)
        if twin is not None:
            raise UnresolvedOutcome(
                f"an identical earlier call ({twin}) has an unknown outcome; it must be "
                "reconciled before this write may run again"
            )
    except ExecGraphError as exc:
        refusal = failure_result(request, exc, tool_version=authorized.spec.version)
        return finish_unreserved(request, deps, refusal, [*log, *gate.events])
    return Staged(request, authorized, uuid.uuid4().hex[:12], list(gate.events))


def run_staged(
    staged: Staged,
    deps: ExecutorDeps,
    reservation: Reservation | None = None,
    log: Sequence[Event] = (),
) -> Finished:
    """Reserve (unless a batch did; with ``log``), lock, invoke, settle, gather evidence
    and commit; a record another worker holds is waited for (lease.py), not run again.

    Raises:
        CallInProgress: another live worker still runs this call after the bounded wait.
        FencedOut: this worker's lease lapsed and another took the call over.
    """
    try:
        return _run_staged(staged, deps, reservation, log)
    finally:
        lease.end(staged.attempt_id)


def _run_staged(
    staged: Staged, deps: ExecutorDeps, reservation: Reservation | None, log: Sequence[Event]
) -> Finished:
    request, authorized, attempt_id = staged.request, staged.authorized, staged.attempt_id
    events = staged.events
    spec = authorized.spec
    normalized_args = authorized.validated.normalized.arguments
    try:
        if reservation is None:
            held = reserve(deps.store, request, authorized, attempt_id, log)
        else:
            held = reserved(claim(request, authorized, attempt_id), reservation)
    except ExecGraphError as exc:
        refusal = failure_result(request, exc, tool_version=spec.version)
        return finish_unreserved(request, deps, refusal, [*log, *events])  # its transaction fell
    key = held.key
    previous = None
    if held.kind == "in_doubt":  # another worker's, or an attempt that ended uncommitted
        wait_s = (spec.timeout_s or deps.default_timeout_s) + lease.LEASE_S
        taken = await_owner(deps.store, held, attempt_id, wait_s=wait_s)
        held, previous = taken.held, taken.previous
    if held.kind == "committed":
        assert held.record.result is not None
        deps.store.append_events(events)  # already logged, unless another worker committed
        committed = ToolResult.model_validate(held.record.result)
        if held.record.call_id != request.call_id or held.record.run_id != request.run_id:
            # The same write of a resubmitted task: its first submission's result, as this
            # call's (it is not done again).
            update = {"call_id": request.call_id, "tool_call_id": request.tool_call_id}
            committed = committed.model_copy(update=update)
        return Finished(committed, tuple(e.event_id for e in events))
    lease.hold(deps.store, key, attempt_id)  # renewed while the tool runs
    fence = held.record.fence
    owner = lease.lock_owner(worker_id(), key)
    ctx = call_context(request, deps, attempt_id, key, spec.timeout_s, events)
    raised = Raised(request, attempt_id, spec.key, events)  # tool.raised: for the developer
    if previous is not None:
        # Taken over from an owner that is gone: resumed from its start if it paused
        # (paused.py), else reconciled, never blindly run again.
        decided = settle_taken_over(staged, deps, held, previous, ctx, raised, owner)
        if decided is not None:
            return decided
    if authorized.token_id and not deps.store.use_approval_token(authorized.token_id):
        used = ApprovalTokenInvalid("approval token was already used")
        return finish(
            request,
            deps,
            key,
            failure_result(request, used, tool_version=spec.version),
            events,
            None,
            fence=fence,
        )
    try:
        keys = lock_keys(spec, normalized_args, request.workspace.id)
        remaining = ctx.remaining_s() or deps.lock_timeout_s
        locked = acquire(
            deps.store,
            keys,
            owner,
            lease_s=remaining + 30.0,
            timeout_s=min(deps.lock_timeout_s, remaining),
        )
    except ExecGraphError as exc:
        return finish(
            request,
            deps,
            key,
            failure_result(request, exc, tool_version=spec.version),
            events,
            None,
            fence=fence,
        )
    attempted = run_attempts(staged, deps, key, ctx, locked, raised)
    invoked = attempted.invoked
    result = build_result(
        request,
        spec.version,
        attempted.settled,
        key=key,
        attempt_id=attempt_id,
        queued_ms=locked.queued_ms,
        running_ms=invoked.running_ms,
        attempts=attempted.attempts,
    )
    if invoked.running is None:
        return finish(request, deps, key, result, events, locked, authorized, fence)
    # The tool ignored the signal and still runs: report the call, keep its locks.
    events.append(
        call_event(
            request,
            EventType.TOOL_ABANDONED,
            attempt_id=attempt_id,
            payload={"reason": invoked.stop, "locks": list(locked.keys)},
        )
    )
    finished = finish(request, deps, key, result, events, None, authorized, fence)

    def ended(late_s: float) -> None:
        event = call_event(
            request,
            EventType.TOOL_ENDED_LATE,
            attempt_id=attempt_id,
            payload={"after_s": round(late_s, 3), "released": list(locked.keys)},
        )
        deps.store.append_events([event])

    hold_until_ended(deps.store, locked, invoked.running, ended)
    return finished
