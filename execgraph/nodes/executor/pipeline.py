"""The executor pipeline: every stage of one tool call, in order.

    gate   1 resolve → 2 normalize → 3 validate → 4 policy → 4b approval      (no effect)
    admit  the twin of an unresolved write refused; an attempt and its record lease
    run    5 reserve → 6 lock → 7 invoke → 8 outcome → 9 evidence → 10 commit

One :class:`~execgraph.nodes.executor.call.Call` flows through them. Each stage is a
function of its own module under :mod:`execgraph.nodes.executor.stages`, testable alone;
what recovers a call off the main line (wait for its record's owner or take it over,
reconcile by probe, a tool that paused the run, a tool that ignored its stop signal) is
under :mod:`execgraph.nodes.executor.recovery`. Any stage may end the call with a typed
failure, committed like any other result (or, before any record exists, logged).

The whole pipeline runs inside one LangGraph node (:mod:`execgraph.nodes.executor.node`),
which re-runs from its start after an interrupt or a crash. That is safe because:

- nothing with a side effect comes before ``interrupt()``: the gate only reads and
  appends events, idempotent by id, and the approval stage's
  :func:`~execgraph.nodes.executor.stages.approval.ask` holds the executor's one
  ``interrupt()``;
- no side effect starts without the call's durable execution record (stage 5); a record
  found started but uncommitted is waited for while its owner's lease holds, and once it
  does not, taken over and reconciled — never blindly run again;
- the model observes a call only after its commit transaction (stage 10), and the node
  returns only reducer fields (results, evidence, budget, event ids), so parallel calls
  never collide.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import replace
from typing import Any, NamedTuple

from langgraph.errors import GraphInterrupt

from execgraph.nodes.executor.call import Authorized, Call, Gate
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.record_lease import hold_record
from execgraph.nodes.executor.recovery.abandoned import hold_until_ended
from execgraph.nodes.executor.recovery.owner import await_owner
from execgraph.nodes.executor.recovery.paused import resumes_pause
from execgraph.nodes.executor.recovery.probe import reconcile_unknown
from execgraph.nodes.executor.recovery.take_over import take_over
from execgraph.nodes.executor.recovery.tool_wait import paused, resumed
from execgraph.nodes.executor.refusals import may_ask_again, uphold
from execgraph.nodes.executor.stages.approval import answered, ask, question_for
from execgraph.nodes.executor.stages.commit import (
    Finished,
    build_result,
    commit,
    committed_before,
    failure_result,
    log_refusal,
)
from execgraph.nodes.executor.stages.evidence import evidence
from execgraph.nodes.executor.stages.invoke import Invoked, invoke, tool_context
from execgraph.nodes.executor.stages.lock import Locked, lock
from execgraph.nodes.executor.stages.normalize import normalize
from execgraph.nodes.executor.stages.outcome import Settled, error_of, retry_delay, settle
from execgraph.nodes.executor.stages.policy import effective_engine, policy_verdict
from execgraph.nodes.executor.stages.reserve import idempotency_key, reserve, unresolved_twin
from execgraph.nodes.executor.stages.resolve import resolve
from execgraph.nodes.executor.stages.validate import refused_at_validate, validate_call
from execgraph.nodes.provenance import call_provenance
from execgraph.state.contracts import ToolExecutionRequest, ToolResult
from execgraph.state.errors import (
    ApprovalStale,
    ApprovalTokenInvalid,
    DomainViolation,
    ExecGraphError,
    PolicyError,
    UnresolvedOutcome,
)
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import Reservation
from execgraph.tools.invocation import InvokeContext

__all__ = ["admit", "authorize", "execute", "gate", "needs_approval", "preview", "run"]


# -- the gate: stages 1-4, no side effect ------------------------------------------------


def authorize(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    typed: Mapping[str, Any] | None = None,
    *,
    shown: bool = True,
) -> Authorized:
    """Stages 1–4a, without any effect: what the executor would run for ``request``.

    The policy sees the arguments' provenance (from the run's record) when a rule reads
    it; a call a person is asked about carries it either way (they are shown it);
    ``typed`` are arguments a person set in an edit, trusted as typed; ``shown=False``
    leaves out the provenance computed only to be shown.

    Raises:
        ExecGraphError: the typed refusal (resolve, validate or policy).
    """
    spec = resolve(request, deps.registry)  # 1 resolve
    try:
        normalized = normalize(request, spec)  # 2 normalize
        validated = validate_call(request, spec, normalized, deps.store)  # 3 validate
    except ExecGraphError as exc:
        refused_at_validate(exc)  # the tool never ran: the refusal is validate's
        raise
    arguments = validated.normalized.arguments

    def provenance() -> Any:
        return call_provenance(deps.store, deps.registry, request.run_id, arguments, typed=typed)

    reads = effective_engine(request, deps.policy).needs_provenance(spec)
    secret = deps.approval_secret
    authorized = policy_verdict(  # 4 policy
        request, spec, validated, deps.policy, secret, provenance() if reads else None
    )
    held = uphold(deps.store, deps.registry, request, spec, arguments, provenance)  # 4 sticks
    if held is not None and authorized.token_id is None:  # a person's no: ask again
        authorized = replace(authorized, decision=held)
    if shown and not reads and authorized.decision.verdict == "require_approval":
        authorized = replace(authorized, provenance=provenance())  # what the person is shown
    return authorized


def gate(call: Call) -> None:
    """Stages 1–4: authorize the call, asking a person when the policy says so.

    Leaves the call cleared (``call.cleared``) or refused (``call.refusal``). A person's
    edit starts over with the edited request, and so does an approval whose target
    changed while the person decided (asked again, showing the target as it is now);
    each round's events are told apart by ``call.round``.
    """
    stale: ApprovalStale | None = None
    typed: Mapping[str, Any] | None = None
    while True:
        _authorize(call, typed)  # 1-4a
        question = question_for(call, stale)
        if question is None:
            return
        decision = ask(call, question)  # 4b approval: the executor's one interrupt()
        again = answered(call, question.shown, decision, recheck=_recheck)
        if again is None:
            return
        call.request, call.round, stale = again.request, call.round + 1, again.stale
        typed = decision.arguments if decision.action == "edit" else typed


def _recheck(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    """:func:`authorize` again after an approval: the person was already shown the
    provenance, so it is computed again only where the policy reads it (it reads the
    run's whole record)."""
    return authorize(request, deps, shown=False)


def _authorize(call: Call, typed: Mapping[str, Any] | None = None) -> None:
    """:func:`authorize` the call's request, logged: ``tool.requested``, then
    ``tool.resolved`` (with the verdict), or the refusal (``tool.denied`` by a policy,
    else ``tool.validation_failed``)."""
    request, seq = call.request, call.round or None
    payload = {"tool": request.tool.name, "arguments": request.arguments}
    call.events.record(EventType.TOOL_REQUESTED, seq=seq, payload=payload)
    try:
        authorized = authorize(request, call.deps, typed)
    except ExecGraphError as exc:
        denied = isinstance(exc, PolicyError)
        kind = EventType.TOOL_DENIED if denied else EventType.TOOL_VALIDATION_FAILED
        refused = error_of(exc).model_dump(mode="json")
        if getattr(exc, "sticks", False):
            refused["sticks"] = True  # later calls are held to it (executor.refusals)
        call.events.record(kind, seq=seq, payload=refused)
        call.authorized, call.refusal = None, exc
        return
    resolved = {
        "tool": authorized.spec.key,
        "deprecated": authorized.spec.deprecated,
        "args_hash": authorized.validated.normalized.args_hash,
        # the arguments as proposed, before aliases, paths and defaults were normalized:
        # equal to args_hash when normalization changed nothing
        "requested_hash": authorized.validated.normalized.hash_before,
        "verdict": authorized.decision.verdict,
    }
    if authorized.provenance:
        resolved["provenance"] = {k: v.label for k, v in authorized.provenance.items()}
    call.events.record(EventType.TOOL_RESOLVED, seq=seq, payload=resolved)
    call.authorized, call.refusal = authorized, None


def preview(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    """Resolve, normalize, validate and authorize without any effect (a dry run).

    Raises:
        ExecGraphError: whatever the executor would refuse the request with.
    """
    return authorize(request, deps)


def needs_approval(request: ToolExecutionRequest, deps: ExecutorDeps) -> bool:
    """Whether the executor will pause this request for a person.

    A tool no rule could ever send to a person (most reads), in a run where no person
    rejected a call it could be held to, needs no dry run to say so — unless the model
    asked for a person's approval of the call.
    """
    try:
        spec = resolve(request, deps.registry)
        engine = deps.policy.with_rules(request.approval_rules)
        asked = request.approval_asked is not None
        if not (asked or engine.may_ask(spec) or may_ask_again(deps.store, request.run_id, spec)):
            return False
        return authorize(request, deps).decision.verdict == "require_approval"
    except ExecGraphError:
        return False


# -- between: a gated call gets its attempt, or its refusal is logged ----------------------


def admit(call: Call, log: Sequence[Event] = ()) -> Finished | None:
    """Ready a gated call for its record: None when it is to :func:`run` (its attempt id,
    record key and record lease set), else its refusal, logged after ``log``.

    Nothing is resolved or validated again: the gate's authorization is what runs, with
    its normalized arguments, hashes, confined paths and policy rule. A write identical to
    an earlier one of the run whose outcome is unknown is refused until that one is
    reconciled.
    """
    authorized = call.cleared
    if authorized is None:
        refused = call.refusal or DomainViolation("the call was never authorized")
        return log_refusal(call, failure_result(call.request, refused), log)
    try:
        twin = unresolved_twin(call.deps.store, call.request, authorized)
        if twin is not None:
            raise UnresolvedOutcome(
                f"an identical earlier call ({twin}) has an unknown outcome; it must be "
                "reconciled before this write may run again"
            )
    except ExecGraphError as exc:
        refusal = failure_result(call.request, exc, tool_version=authorized.spec.version)
        return log_refusal(call, refusal, log)
    call.attempt_id = os.urandom(6).hex()  # 12 hex digits, as unique as a uuid4's first 12
    call.key = idempotency_key(call.request, authorized)
    hold_record(call)  # live in this process from before its record exists
    return None


def execute(
    request: ToolExecutionRequest, verdict: Gate, deps: ExecutorDeps, log: Sequence[Event] = ()
) -> Finished:
    """Run (or log the refusal of) a request on which a gate outside the executor decided
    (a fixed approval node); ``log`` is written with the call's first store write."""
    call = Call.gated(request, verdict, deps)
    refused = admit(call, log)
    return refused if refused is not None else run(call, log=log)


# -- run: stages 5-10 ----------------------------------------------------------------------


def run(call: Call, reservation: Reservation | None = None, log: Sequence[Event] = ()) -> Finished:
    """Stages 5–10 for an admitted call: reserve (unless a batch reserved it, with
    ``log``), lock, invoke, settle, gather evidence and commit.

    Raises:
        CallInProgress: another live worker still runs this call after the bounded wait.
        FencedOut: this worker's lease lapsed and another took the call over.
    """
    try:
        return _run(call, reservation, log)
    finally:
        assert call.lease is not None
        call.lease.release()


def _run(call: Call, reservation: Reservation | None, log: Sequence[Event]) -> Finished:
    try:
        held = reserve(call, reservation, log)  # 5 reserve: the durable record, first
    except ExecGraphError as exc:  # its transaction fell: the refusal is logged on its own
        return log_refusal(call, _failure(call, exc), log)
    previous, may_still_run = None, False
    if held.kind == "in_doubt":  # another worker's call in flight, or an attempt cut short
        taken = await_owner(call, held)  # recovery: wait for its owner, or take it over
        held, previous, may_still_run = taken.held, taken.previous, taken.may_still_run
    if held.kind == "committed":
        return committed_before(call, held.record)  # its result, as committed then
    assert call.lease is not None and call.authorized is not None
    call.fence = held.record.fence
    call.lease.start(on_lost=call.cancel.set)  # renewed while it runs; lost: told to stop
    ctx = tool_context(call)
    if previous is not None:  # taken over from an owner that is gone
        # recovery: resume a pause, or reconcile (an owner that may still run: no rerun)
        recovered = take_over(call, previous, ctx, may_still_run=may_still_run)
        if recovered is not None:
            return commit(call, build_result(call, recovered.settled), recovered.locked)
        expired = resumed(call) if resumes_pause(previous) else None  # its wait's deadline
        if expired is not None:
            return commit(call, expired, None)
    token = call.authorized.token_id
    if token and not call.deps.store.use_approval_token(token):
        used = ApprovalTokenInvalid("approval token was already used")
        return commit(call, _failure(call, used), None)
    try:
        locked = lock(call, ctx)  # 6 lock
    except ExecGraphError as exc:
        return commit(call, _failure(call, exc), None)
    invoked, settled, attempts = _attempts(call, ctx, locked)  # 7 invoke, 8 outcome
    args = call.authorized.validated.args
    settled = reconcile_unknown(call.spec, args, settled, ctx, call.report)  # recovery: probe
    settled = evidence(call, settled, invoked.output, ctx)  # 9 evidence
    result = build_result(
        call,
        settled,
        queued_ms=locked.queued_ms,
        running_ms=invoked.running_ms,
        attempts=attempts,
    )
    if invoked.running is None:
        return commit(call, result, locked)  # 10 commit
    return _abandoned(call, result, locked, invoked)


class _Attempts(NamedTuple):
    invoked: Invoked
    settled: Settled
    attempts: int


def _attempts(call: Call, ctx: InvokeContext, locked: Locked) -> _Attempts:
    """Stages 7 and 8: invoke the tool and settle what it did, again while its retry
    policy allows (never once it ignored its stop signal or the call is cancelled). A tool
    that pauses the run (``interrupt()``) leaves its record marked paused, its locks free.
    """
    call.attempt_event(EventType.TOOL_STARTED, payload={"tool": call.spec.key})
    _announce(call)
    attempt = 1
    while True:
        try:
            invoked = invoke(call, ctx)  # 7 invoke
        except GraphInterrupt as asked:  # the tool paused the run: recovery.tool_wait
            paused(call, asked, locked)
            raise
        if invoked.raised is not None:
            call.report("invoke", invoked.raised)
        settled = settle(call.spec, invoked, call.deps.output_budget, ctx.put_artifact)  # 8
        delay = retry_delay(call.spec, settled, attempt, ctx, call.request.retry_allowance)
        if delay is None or invoked.running is not None:
            return _Attempts(invoked, settled, attempt)
        call.attempt_event(
            EventType.TOOL_RETRIED,
            seq=attempt,
            payload={
                "attempt": attempt,
                "after_s": round(delay, 3),
                "error": settled.error.type if settled.error else None,
            },
        )
        time.sleep(delay)
        if call.cancelled():
            return _Attempts(invoked, settled, attempt)
        attempt += 1


def _announce(call: Call) -> None:
    """Log (and so stream) the call's events so far — request, resolution, start — before
    its tool runs, not only with its commit: a watcher sees a slow call start when it
    starts. Not waited to disk (nothing depends on it yet: the commit writes them again,
    an id already logged is skipped); a store that cannot take them now loses nothing."""
    with suppress(ExecGraphError):
        call.deps.store.append_events(call.events.recorded(), durable=False)


def _abandoned(call: Call, result: ToolResult, locked: Locked, invoked: Invoked) -> Finished:
    """Commit a call whose tool ignored its stop signal and still runs, keeping its locks
    until the tool ends (recovery.abandoned); both moments are logged."""
    assert invoked.running is not None
    payload = {"reason": invoked.stop, "locks": list(locked.keys)}
    call.attempt_event(EventType.TOOL_ABANDONED, payload=payload)
    finished = commit(call, result, None)

    def ended(late_s: float) -> None:
        late = {"after_s": round(late_s, 3), "released": list(locked.keys)}
        event = call.events.event(
            EventType.TOOL_ENDED_LATE, attempt_id=call.attempt_id, payload=late
        )
        call.deps.store.append_events([event])

    hold_until_ended(call.deps.store, locked, invoked.running, ended)
    return finished


def _failure(call: Call, error: ExecGraphError) -> ToolResult:
    return failure_result(call.request, error, tool_version=call.spec.version)
