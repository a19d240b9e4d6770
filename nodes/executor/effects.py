"""The executor's effectful half: reserve → lock → invoke → outcome → evidence → commit.

No side effect starts before the durable execution record exists; a record found started
but uncommitted is another worker's call in flight (waited for, never run again: lease.py)
or, once its owner is gone, one a crash cut short (taken over and reconciled, never
blindly run again); one store transaction commits result, evidence, idempotency state,
lock release and events, and only while this worker still holds the record (its fence).
"""

from __future__ import annotations

import contextvars
import threading
import time
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.errors import GraphInterrupt

from execgraph.nodes.cancel import cancel_requested
from execgraph.nodes.executor import lease
from execgraph.nodes.executor.abandoned import hold_until_ended
from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.commit import build_result, commit, failure_result
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.evidence import gather_evidence
from execgraph.nodes.executor.gate import Gate
from execgraph.nodes.executor.invoke import invoke
from execgraph.nodes.executor.lease import await_owner
from execgraph.nodes.executor.lock import acquire, lock_keys
from execgraph.nodes.executor.outcome import settle
from execgraph.nodes.executor.paused import mark_paused, resumes_pause
from execgraph.nodes.executor.raised import Raised
from execgraph.nodes.executor.reconcile import in_doubt
from execgraph.nodes.executor.reserve import (
    claim,
    mark_unresolved,
    reserve,
    reserved,
    unresolved_twin,
)
from execgraph.nodes.executor.retries import retry_delay
from execgraph.nodes.executor.stages import Authorized, Finished, Locked, Staged
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
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["execute", "run_staged", "stage"]


def _context(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    attempt_id: str,
    key: str,
    timeout_s: float | None,
    sink: list[Event],
) -> InvokeContext:
    deadline = request.deadline
    limit = time.time() + (timeout_s or deps.default_timeout_s)
    deadline = limit if deadline is None else min(deadline, limit)
    try:
        writer = get_stream_writer()
    except RuntimeError:
        writer = None
    # Tools emit from their own threads; LangGraph's writer needs the node's context, and
    # one context cannot be entered by two threads at once (stdout and stderr readers).
    node_context, entering = contextvars.copy_context(), threading.Lock()
    counter = iter(range(1_000_000_000))

    def emit(kind: str, payload: dict[str, Any]) -> None:
        seq = next(counter)
        sink.append(
            call_event(
                request,
                EventType.TOOL_OUTPUT,
                attempt_id=attempt_id,
                seq=seq,
                payload={"kind": kind, **payload},
            )
        )
        if writer is not None:
            try:
                with entering:
                    node_context.run(writer, {"call_id": request.call_id, "kind": kind, **payload})
            except Exception:  # live progress is best effort; it never fails the tool
                pass

    def put_artifact(data: bytes, kind: str) -> str:
        return deps.store.put_artifact(data, kind=kind, run_id=request.run_id)

    return InvokeContext(
        run_id=request.run_id,
        call_id=request.call_id,
        attempt_id=attempt_id,
        workspace_root=Path(request.workspace.root),
        idempotency_key=key,
        deadline=deadline,
        output_budget=deps.output_budget,
        data_scope=tuple(request.data_scope),
        trace={"run_id": request.run_id, "turn_id": request.turn_id, "call_id": request.call_id},
        emit=emit,
        put_artifact=put_artifact,
    )


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
        return _unreserved(request, deps, failure_result(request, refused), [*log, *gate.events])
    try:
        twin = unresolved_twin(deps.store, request, authorized)
        if twin is not None:
            raise UnresolvedOutcome(
                f"an identical earlier call ({twin}) has an unknown outcome; it must be "
                "reconciled before this write may run again"
            )
    except ExecGraphError as exc:
        refusal = failure_result(request, exc, tool_version=authorized.spec.version)
        return _unreserved(request, deps, refusal, [*log, *gate.events])
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
    spec, args = authorized.spec, authorized.validated.args
    normalized_args = authorized.validated.normalized.arguments
    try:
        if reservation is None:
            held = reserve(deps.store, request, authorized, attempt_id, log)
        else:
            held = reserved(claim(request, authorized, attempt_id), reservation)
    except ExecGraphError as exc:
        refusal = failure_result(request, exc, tool_version=spec.version)
        return _unreserved(request, deps, refusal, [*log, *events])  # its transaction fell
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
    ctx = _context(request, deps, attempt_id, key, spec.timeout_s, events)
    raised = Raised(request, attempt_id, spec.key, events)  # tool.raised: for the developer
    if previous is not None:
        # Taken over from an owner that is gone: resumed from its start if it paused
        # (paused.py), else reconciled, never blindly run again.
        settled = None if resumes_pause(previous) else in_doubt(spec, args, ctx, raised)
        crashed = Locked(
            keys=_keys_or_none(spec, normalized_args, request),
            owner=lease.lock_owner(previous.owner, key),
            queued_ms=0,
        )
        if settled is not None:
            events.append(
                call_event(
                    request,
                    EventType.TOOL_RECONCILED,
                    attempt_id=attempt_id,
                    payload={
                        "outcome": settled.outcome,
                        "committed": settled.side_effect.committed,
                    },
                )
            )
            result = build_result(request, spec.version, settled, key=key, attempt_id=attempt_id)
            # The crashed attempt's locks are its owner's: free them with the commit.
            return _finish(request, deps, key, result, events, crashed, authorized, fence)
        if crashed.keys and crashed.owner != owner:
            deps.store.release_locks(crashed.keys, crashed.owner)
    if authorized.token_id and not deps.store.use_approval_token(authorized.token_id):
        used = ApprovalTokenInvalid("approval token was already used")
        return _finish(
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
        return _finish(
            request,
            deps,
            key,
            failure_result(request, exc, tool_version=spec.version),
            events,
            None,
            fence=fence,
        )
    events.append(
        call_event(
            request, EventType.TOOL_STARTED, attempt_id=attempt_id, payload={"tool": spec.key}
        )
    )

    def stopping(why: str) -> None:  # logged at once: the call is cancelling from now
        event = call_event(
            request, EventType.TOOL_CANCELLING, attempt_id=attempt_id, payload={"reason": why}
        )
        events.append(event)
        deps.store.append_events([event])

    cancelled = partial(cancel_requested, deps.store, request.run_id)
    attempts = 1
    while True:
        try:
            invoked = invoke(spec, args, ctx, deps.pool, cancelled, on_stop=stopping)
        except GraphInterrupt:  # the tool called interrupt(): paused.py
            mark_paused(deps.store, key, attempt_id, locked)
            raise
        if invoked.raised is not None:
            raised("invoke", invoked.raised)
        settled = settle(spec, invoked, deps.output_budget, ctx.put_artifact)
        delay = retry_delay(spec, settled, attempts, ctx, request.retry_allowance)
        if delay is None or invoked.running is not None:
            break
        events.append(
            call_event(
                request,
                EventType.TOOL_RETRIED,
                attempt_id=attempt_id,
                seq=attempts,
                payload={
                    "attempt": attempts,
                    "after_s": round(delay, 3),
                    "error": settled.error.type if settled.error else None,
                },
            )
        )
        time.sleep(delay)
        if cancelled():
            break
        attempts += 1
    settled = gather_evidence(spec, args, settled, invoked.output, ctx, raised)
    if settled.side_effect.attempted:
        events.append(
            call_event(
                request,
                EventType.TOOL_SIDE_EFFECT_OBSERVED,
                attempt_id=attempt_id,
                payload=settled.side_effect.model_dump(mode="json"),
            )
        )
    if settled.reconciled:
        events.append(
            call_event(
                request,
                EventType.TOOL_RECONCILED,
                attempt_id=attempt_id,
                payload={"outcome": settled.outcome},
            )
        )
    result = build_result(
        request,
        spec.version,
        settled,
        key=key,
        attempt_id=attempt_id,
        queued_ms=locked.queued_ms,
        running_ms=invoked.running_ms,
        attempts=attempts,
    )
    if invoked.running is None:
        return _finish(request, deps, key, result, events, locked, authorized, fence)
    # The tool ignored the signal and still runs: report the call, keep its locks.
    events.append(
        call_event(
            request,
            EventType.TOOL_ABANDONED,
            attempt_id=attempt_id,
            payload={"reason": invoked.stop, "locks": list(locked.keys)},
        )
    )
    finished = _finish(request, deps, key, result, events, None, authorized, fence)

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


def _keys_or_none(
    spec: ToolSpec, arguments: dict[str, Any], request: ToolExecutionRequest
) -> tuple[str, ...]:
    try:
        return lock_keys(spec, arguments, request.workspace.id)
    except ExecGraphError:
        return ()


def _unreserved(
    request: ToolExecutionRequest, deps: ExecutorDeps, result: ToolResult, events: list[Event]
) -> Finished:
    """Log the events of a call refused before any record was reserved, and its end."""
    done = call_event(
        request,
        EventType.TOOL_COMPLETED,
        payload={"outcome": result.outcome, "status": result.status},
    )
    logged = [*events, done]
    deps.store.append_events(logged)
    return Finished(result, tuple(e.event_id for e in logged))


def _finish(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    key: str,
    result: ToolResult,
    events: list[Event],
    locked: Locked | None,
    authorized: Authorized | None = None,
    fence: int | None = None,
) -> Finished:
    events.append(
        call_event(
            request,
            EventType.TOOL_COMPLETED,
            attempt_id=result.attempt_id,
            payload={"outcome": result.outcome, "status": result.status},
        )
    )
    # A read is safe to redo, so its commit need not wait for the disk; anything that may
    # have changed the world is flushed before the model can observe it.
    redo_safe = authorized is not None and authorized.spec.effect == "read"
    final = commit(deps.store, key, result, events, locked, durable=not redo_safe, fence=fence)
    if final.outcome == "unknown" and authorized is not None:
        mark_unresolved(deps.store, request, authorized, final.model_dump(mode="json"))
    return Finished(final, tuple(e.event_id for e in events))
