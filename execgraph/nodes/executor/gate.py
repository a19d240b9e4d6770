"""The executor's gate: authorize (resolve → normalize → validate → policy), then approval.

Nothing here has a side effect but appending events (idempotent by id), so the gate may
re-run freely when its node re-runs after an interrupt or a crash; ``ask_person`` holds
the executor's only ``interrupt()`` and re-checks freshness when the person answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from langgraph.types import interrupt

from execgraph.nodes.executor.approval import (
    approval_request,
    changed_targets,
    check_fresh,
    decide_once,
    parse_decision,
)
from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.normalize import normalize
from execgraph.nodes.executor.outcome import error_of
from execgraph.nodes.executor.policy import authorize
from execgraph.nodes.executor.reserve import idempotency_key
from execgraph.nodes.executor.resolve import resolve
from execgraph.nodes.executor.stages import Authorized, Validated
from execgraph.nodes.executor.validate import refused_at_validate, validate
from execgraph.state.contracts import ApprovalRequest, ToolExecutionRequest
from execgraph.state.errors import (
    ApprovalRejected,
    ApprovalStale,
    ExecGraphError,
    PolicyError,
    StateGuardMismatch,
)
from execgraph.state.events import Event, EventType
from execgraph.tools.spec import ToolSpec

__all__ = [
    "Gate",
    "ask_person",
    "authorize_call",
    "gate_call",
    "needs_approval",
    "preview",
]


def _check(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    spec = resolve(request, deps.registry)
    try:
        validated = _validated(request, spec, deps)
    except ExecGraphError as exc:
        refused_at_validate(exc)  # the tool never ran: the refusal is validate's
        raise
    return authorize(request, spec, validated, deps.policy, deps.approval_secret)


def _validated(request: ToolExecutionRequest, spec: ToolSpec, deps: ExecutorDeps) -> Validated:
    normalized = normalize(request, spec)
    try:
        return validate(request, spec, normalized)
    except StateGuardMismatch:
        if not _recorded(request, deps):
            raise
    # The call passed its guard before and has a record, which decides: a committed result
    # is returned as is, one in doubt is reconciled. (A node re-run after a crash finds the
    # target changed by this very call.)
    return validate(request.model_copy(update={"expected_state": {}}), spec, normalized)


def _recorded(request: ToolExecutionRequest, deps: ExecutorDeps) -> bool:
    """Whether this call already has an execution record (it passed the gate before)."""
    return deps.store.get(idempotency_key(request)) is not None


@dataclass(frozen=True)
class Gate:
    """What the pure half decided about one call, handed as is to the effectful half.

    Exactly one of: ``authorized`` (the resolved spec, validated and normalized arguments
    with their hashes and confined paths, the policy's verdict and rule; ``approved_by``
    names the person when one approved it), ``failure`` (the typed refusal), ``approval``
    (the question still to ask a person about ``authorized``), ``edited`` (a person's
    edit: a new request to authorize from the start) or ``stale`` (approved, but a target
    changed while the person decided: ask again, showing its new state).
    """

    events: tuple[Event, ...]
    authorized: Authorized | None = None
    approved_by: str | None = None
    failure: ExecGraphError | None = None
    approval: ApprovalRequest | None = None
    edited: ToolExecutionRequest | None = None
    stale: ApprovalStale | None = None

    @property
    def cleared(self) -> Authorized | None:
        """The authorized call if it may run now: allowed, and no question left to ask."""
        authorized = self.authorized
        if self.failure is not None or self.approval is not None or authorized is None:
            return None
        return authorized if authorized.decision.verdict == "allow" else None


def _approved(events: tuple[Event, ...], authorized: Authorized, approver: str) -> Gate:
    """The gate of a call a person approved: the policy's ask becomes an allow, its reason
    and rule kept."""
    allowed = replace(authorized.decision, verdict="allow")
    return Gate(events, authorized=replace(authorized, decision=allowed), approved_by=approver)


def authorize_call(request: ToolExecutionRequest, deps: ExecutorDeps, round_: int = 0) -> Gate:
    """Resolve, normalize, validate and authorize; no side effect happens here."""
    seq = round_ or None
    events: list[Event] = [
        call_event(
            request,
            EventType.TOOL_REQUESTED,
            seq=seq,
            payload={"tool": request.tool.name, "arguments": request.arguments},
        )
    ]
    try:
        authorized = _check(request, deps)
    except ExecGraphError as exc:
        kind = (
            EventType.TOOL_DENIED
            if isinstance(exc, PolicyError)
            else EventType.TOOL_VALIDATION_FAILED
        )
        payload = error_of(exc).model_dump(mode="json")
        events.append(call_event(request, kind, seq=seq, payload=payload))
        return Gate(tuple(events), failure=exc)
    events.append(
        call_event(
            request,
            EventType.TOOL_RESOLVED,
            seq=seq,
            payload={
                "tool": authorized.spec.key,
                "deprecated": authorized.spec.deprecated,
                "args_hash": authorized.validated.normalized.args_hash,
                "verdict": authorized.decision.verdict,
            },
        )
    )
    approval = None
    if authorized.decision.verdict == "require_approval":
        approval = approval_request(request, authorized, ttl_s=deps.approval_ttl_s)
    return Gate(tuple(events), authorized=authorized, approval=approval)


def ask_person(
    request: ToolExecutionRequest, gate: Gate, deps: ExecutorDeps, round_: int = 0
) -> Gate:
    """Pause for a person; on resume apply approve / reject / edit, re-checking freshness.

    Everything logged so far is appended before the pause (idempotent by id), so the store
    shows a waiting approval; after the answer the caller re-derives the same events. An
    approval whose targets changed meanwhile comes back ``stale``, to be asked again. Of
    two different answers to one request, only the first recorded acts (``decide_once``).

    Raises:
        ApprovalConflict: another answer to this request was recorded first.
    """
    assert gate.approval is not None
    asked = _asked(deps, request, round_)
    if asked is None:  # the first time here: log what the person is shown, then pause
        asked = gate.approval
        deps.store.append_events([*gate.events, _asked_event(request, round_, asked)])
    asked_event = _asked_event(request, round_, asked)
    answer = parse_decision(interrupt(asked.model_dump(mode="json")))
    decision = decide_once(deps.store, asked_event.event_id, answer)  # the first one stands
    answered = call_event(
        request,
        EventType.APPROVAL_RESOLVED,
        seq=round_,
        payload=decision.model_dump(mode="json"),
    )
    events = (*gate.events, asked_event, answered)
    if decision.action == "reject":
        exc = ApprovalRejected(
            f"{asked.tool} was rejected" + (f": {decision.reason}" if decision.reason else "")
        )
        return Gate(events, failure=exc)
    if decision.action == "edit":
        edited = request.model_copy(update={"arguments": decision.arguments or {}})
        return Gate(events, edited=edited)
    try:
        current = _check(request, deps)
        check_fresh(asked, current)
    except ApprovalStale as exc:
        return Gate(events, failure=exc)
    except ExecGraphError as exc:
        # What was approved no longer holds (state guard, deadline, policy): the approval
        # is stale, whatever check noticed it first.
        stale = ApprovalStale(f"the approved call no longer holds: {exc.message}")
        return Gate(events, failure=stale)
    changed = changed_targets(asked, request, current)
    if changed is not None and not _recorded(request, deps):
        return Gate(events, stale=changed)
    return _approved(events, current, decision.approver)


def _asked_event(request: ToolExecutionRequest, round_: int, asked: ApprovalRequest) -> Event:
    return call_event(
        request, EventType.APPROVAL_REQUESTED, seq=round_, payload=asked.model_dump(mode="json")
    )


def _asked(
    deps: ExecutorDeps, request: ToolExecutionRequest, round_: int
) -> ApprovalRequest | None:
    """The approval request logged before an earlier pause of this call and round, if any.

    The node re-runs on resume: what the person was shown is this logged request, not one
    derived again now (the tool, its arguments or their target may have changed since).
    """
    event_id = call_event(request, EventType.APPROVAL_REQUESTED, seq=round_).event_id
    for event in deps.store.events(request.run_id, call_id=request.call_id):
        if event.event_id == event_id and event.payload:
            return ApprovalRequest.model_validate(event.payload)
    return None


def gate_call(
    request: ToolExecutionRequest, deps: ExecutorDeps
) -> tuple[ToolExecutionRequest, Gate]:
    """Authorize ``request``, asking a person when the policy says so; an edit starts over,
    and so does an approval whose target changed meanwhile (asked again, with its new state).

    Returns the request that will run (an edited one after an edit) and the final gate.
    """
    round_ = 0
    events: tuple[Event, ...] = ()
    stale: ApprovalStale | None = None
    while True:
        gate = authorize_call(request, deps, round_)
        gate = replace(gate, events=(*events, *gate.events))
        if gate.failure is not None:
            # Refused now, but a person was already asked about this call: their answer
            # decides (a rejection stays a rejection; an approval is reported stale).
            asked = _asked(deps, request, round_)
            if asked is not None:
                gate = Gate(gate.events, approval=asked)
        if gate.approval is None:
            return request, gate
        if stale is not None:  # say why the person is asked again
            again = f"asked again: {stale.message} ({gate.approval.reason})"
            gate = replace(gate, approval=gate.approval.model_copy(update={"reason": again}))
        answer = ask_person(request, gate, deps, round_)
        if answer.edited is None and answer.stale is None:
            return request, answer
        request = answer.edited or request
        events, round_, stale = answer.events, round_ + 1, answer.stale


def preview(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    """Resolve, normalize, validate and authorize without any effect (a dry run).

    Raises:
        ExecGraphError: whatever the executor would refuse the request with.
    """
    return _check(request, deps)


def needs_approval(request: ToolExecutionRequest, deps: ExecutorDeps) -> bool:
    """Whether the executor will pause this request for a person.

    A tool no rule could ever send to a person (most reads) needs no dry run to say so.
    """
    try:
        spec = resolve(request, deps.registry)
        engine = deps.policy.with_rules(request.approval_rules)
        if not engine.may_ask(spec):
            return False
        return preview(request, deps).decision.verdict == "require_approval"
    except ExecGraphError:
        return False
