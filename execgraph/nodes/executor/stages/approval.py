"""Stage 4b — approval: a person is asked, and their answer applies only while it still fits.

:func:`ask` holds the executor's only ``interrupt()``. What the person is shown is logged
before the pause (with everything the call logged so far), and on resume the node runs
again from its start: the question is then the one logged (:func:`question_for`), not one
derived anew, since the tool, its arguments or their target may have changed meanwhile.

The request binds tool version and normalized-args hash and shows the state of each
target the tool can read. Between asking and answering the world may change, so on resume
the call is re-resolved and re-validated and must still match what was shown: same
version, same hash, expected state still holding, not expired — and the same target
state, or the person is asked again about the target as it is now.

One answer per question: two people (or two workers) answering the same request at once
would otherwise both act — a payment made while the state says rejected. The store keeps
the first decision per request (:func:`decide_once`); a later answer that says the same
goes on with it, one that differs is refused with ApprovalConflict and does nothing.

An answer is read by :mod:`execgraph.nodes.executor.decisions` (execgraph's shape or
HumanInTheLoopMiddleware's), the one reader ``ExecutorMiddleware`` uses too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from langgraph.types import Command, Interrupt, interrupt

from execgraph.nodes.executor.call import Authorized, Call
from execgraph.nodes.executor.decisions import RESUME_VALUES, parse_decision, read_decision
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.stages.expiry import Again, Escalated, expired
from execgraph.nodes.executor.stages.reserve import recorded
from execgraph.nodes.executor.targets import target_state
from execgraph.state.contracts import ApprovalDecision, ApprovalRequest, ToolExecutionRequest
from execgraph.state.errors import (
    ApprovalConflict,
    ApprovalRejected,
    ApprovalStale,
    ExecGraphError,
    UsageError,
)
from execgraph.state.events import EventType
from execgraph.state.secret_args import REDACTED, redact_arguments
from execgraph.state.store.base import ExecutionStore
from execgraph.state.waits import wait_deadline

__all__ = [
    "RESUME_VALUES",
    "Again",
    "Escalated",
    "Question",
    "answered",
    "approval_request",
    "ask",
    "changed_targets",
    "check_fresh",
    "check_resume",
    "decide_once",
    "expired",
    "is_approval",
    "parse_decision",
    "question_for",
    "read_decision",
    "require_answer",
]


def _target_state(request: ToolExecutionRequest, authorized: Authorized) -> dict[str, str]:
    validated = authorized.validated
    root = Path(request.workspace.root)
    return target_state(authorized.spec, validated.args, validated.normalized.arguments, root)


def approval_request(
    request: ToolExecutionRequest, authorized: Authorized, *, ttl_s: float, now: float | None = None
) -> ApprovalRequest:
    """The interrupt payload for ``authorized``, with its targets' current state; it expires
    at the request's wait rule (else the TTL) or the deadline, whichever comes first."""
    current = time.time() if now is None else now
    expires = wait_deadline(current, request.wait, ttl_s, request.deadline)
    normalized = authorized.validated.normalized
    return ApprovalRequest(
        run_id=request.run_id,
        call_id=request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        effect=authorized.spec.effect,
        arguments=redact_arguments(normalized.arguments, authorized.spec.secrets),
        args_hash=normalized.args_hash,
        reason=authorized.decision.reason,
        expires_at=expires,
        target_state=_target_state(request, authorized),
        provenance=_shown_provenance(authorized),
        asked_at=current,
        on_expiry=request.wait.on_expiry if request.wait is not None else "reject",
    )


def _shown_provenance(authorized: Authorized) -> dict[str, Any]:
    """Each argument's provenance as a person is shown it; a secret argument's without
    its value or where it was read (an excerpt would show it)."""
    secrets = authorized.spec.secrets
    shown = {}
    for name, found in (authorized.provenance or {}).items():
        seen = found.to_dict()
        if name in secrets:
            atoms = [{"value": REDACTED, "label": a.get("label")} for a in seen.get("atoms", [])]
            seen = {**seen, "atoms": atoms}
        shown[name] = seen
    return shown


def is_approval(value: Any) -> bool:
    """Whether an interrupt's value is an approval request (not a tool's own question)."""
    return isinstance(value, dict) and {"call_id", "tool", "args_hash"} <= set(value)


def check_resume(pending: Sequence[Interrupt], resume: Any) -> None:
    """Refuse a resume value that cannot answer the approvals it reaches, before the run
    resumes, so a malformed answer leaves the run paused and the approval answerable.

    A dict keyed by pending interrupt ids answers each; one whose keys look like interrupt
    ids none of which is pending names a wrong id; any other value answers the one pending
    interrupt. Answers to a tool's own ``interrupt()`` or to ``ask_user`` are the tool's
    to read and pass as they are.

    Raises:
        UsageError: an approval's answer cannot be read, or an id names no pending interrupt.
    """
    if not pending:
        return
    by_id = {i.id: i for i in pending}
    if isinstance(resume, dict) and resume and all(_interrupt_id(k) for k in resume):
        unknown = sorted(k for k in resume if k not in by_id)
        if unknown:
            raise UsageError(
                f"no pending interrupt has the id {unknown[0]!r}; the run waits on "
                f"{', '.join(sorted(by_id))}; nothing was decided"
            )
        answers = [(by_id[k], v) for k, v in resume.items()]
    elif len(pending) == 1:
        answers = [(pending[0], resume)]
    else:
        return  # LangGraph asks for the ids itself
    for asked, answer in answers:
        if is_approval(asked.value):
            read_decision(answer, str(asked.value["tool"]))


def _interrupt_id(key: Any) -> bool:
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


def require_answer(value: Any) -> None:
    """Refuse a resume that carries no answer (``Command(resume=None)``), saying what to
    pass; LangGraph itself fails on it with an ``UnboundLocalError``.

    Raises:
        UsageError: ``value`` is a Command with no resume value, update or goto.
    """
    empty = isinstance(value, Command) and value.resume is None
    if empty and not value.update and not value.goto:
        raise UsageError(f"a resume needs an answer: pass {RESUME_VALUES}")


def decide_once(
    store: ExecutionStore, request_id: str, decision: ApprovalDecision
) -> ApprovalDecision:
    """The decision that stands for the approval request ``request_id``: the first one
    recorded. An answer saying the same as it (a second approver) goes on with it.

    Raises:
        ApprovalConflict: another, different answer was recorded first; this one lost.
    """
    stands = ApprovalDecision.model_validate(
        store.decide_approval(request_id, decision.model_dump(mode="json"))
    )
    if stands.action == decision.action and stands.arguments == decision.arguments:
        return stands
    raise ApprovalConflict(
        f"this approval request was already answered ({stands.action!r} by "
        f"{stands.approver}); this {decision.action!r} was not applied"
    )


def check_fresh(
    approved: ApprovalRequest, current: Authorized, *, now: float | None = None
) -> None:
    """Raise ApprovalStale unless ``current`` is still exactly what was approved."""
    if (
        approved.expires_at is not None
        and (time.time() if now is None else now) > approved.expires_at
    ):
        raise ApprovalStale("the approval arrived after it expired")
    if current.spec.version != approved.version:
        raise ApprovalStale(
            f"tool {approved.tool} changed from {approved.version} to {current.spec.version}"
        )
    if current.validated.normalized.args_hash != approved.args_hash:
        raise ApprovalStale("the arguments changed after approval was requested")


def changed_targets(
    approved: ApprovalRequest, request: ToolExecutionRequest, current: Authorized
) -> ApprovalStale | None:
    """Why the approval no longer fits its targets (one changed while the person decided),
    or None when each is as they were shown it.

    A change is no silent failure: the caller asks again, showing the new state.
    """
    now = _target_state(request, current)
    if now == approved.target_state:
        return None
    shown = approved.target_state
    names = sorted(k for k in {*now, *shown} if now.get(k) != shown.get(k))
    return ApprovalStale(f"{', '.join(names)} changed while the approval was pending")


@dataclass(frozen=True)
class Question:
    """What a person is asked about a call: ``shown``, already ``logged`` before an
    earlier pause of this round, or new."""

    shown: ApprovalRequest
    logged: bool


def _logged(call: Call) -> ApprovalRequest | None:
    """The question logged before an earlier pause of this call and round, if any."""
    event_id = call.events.event(EventType.APPROVAL_REQUESTED, seq=call.round).event_id
    for event in call.deps.store.events(call.request.run_id, call_id=call.request.call_id):
        if event.event_id == event_id and event.payload:
            return ApprovalRequest.model_validate(event.payload)
    return None


def question_for(call: Call, stale: ApprovalStale | None = None) -> Question | None:
    """What to ask a person about ``call`` in this round, or None.

    A call the gate refused, or one the policy sends to a person, is first looked up: a
    person asked before this round's pause decides, whatever holds now (a rejection
    stays a rejection; an approval is checked for freshness). Otherwise a call the policy
    sends to a person gets a new question, saying why it is asked again after ``stale``.
    """
    authorized = call.authorized
    if authorized is not None and authorized.decision.verdict != "require_approval":
        return None
    logged = _logged(call)
    if logged is not None:
        return Question(logged, logged=True)
    if authorized is None:
        return None
    shown = approval_request(
        call.request, authorized, ttl_s=call.deps.approval_ttl_s, now=call.deps.store.clock()
    )
    if stale is not None:
        reason = f"asked again: {stale.message} ({shown.reason})"
        shown = shown.model_copy(update={"reason": reason})
    if isinstance(stale, Escalated):  # asked once more, of someone else; then refused
        shown = shown.model_copy(update={"escalated_to": stale.to, "on_expiry": "reject"})
    return Question(shown, logged=False)


def ask(call: Call, question: Question) -> ApprovalDecision:
    """Pause for a person (``interrupt()``) and return the answer that stands.

    Everything the call logged so far is written before the first pause (idempotent by
    id), so the store shows a waiting approval. Of two different answers to one request,
    only the first recorded acts (:func:`decide_once`).

    Raises:
        ApprovalConflict: another answer to this request was recorded first.
    """
    asked = call.events.event(
        EventType.APPROVAL_REQUESTED, seq=call.round, payload=question.shown.model_dump(mode="json")
    )
    if not question.logged:
        call.deps.store.append_events([*call.events.recorded(), asked])
    shown = question.shown.model_dump(mode="json")
    answer = parse_decision(
        interrupt(shown, response_schema=call.deps.decision_schema), question.shown.tool
    )
    decision = decide_once(call.deps.store, asked.event_id, answer)  # the first one stands
    call.events.extend([asked])
    call.events.record(
        EventType.APPROVAL_RESOLVED, seq=call.round, payload=decision.model_dump(mode="json")
    )
    return decision


def answered(
    call: Call,
    shown: ApprovalRequest,
    decision: ApprovalDecision,
    recheck: Callable[[ToolExecutionRequest, ExecutorDeps], Authorized],
) -> Again | None:
    """Apply a person's answer to ``call``: a rejection refuses it; an edit is a new
    request (:class:`Again`); an approval authorizes it if ``recheck`` (stages 1–4a run
    again) still finds exactly what was ``shown`` — else it is refused as stale, or asked
    again when only a target changed while the person decided.

    An answer after the question's deadline (the store's clock) does not count: the
    question's expiry policy decides instead (:func:`expired`)."""
    if shown.expires_at is not None and call.deps.store.clock() > shown.expires_at:
        return expired(call, shown)
    if decision.action == "reject":
        why = f": {decision.reason}" if decision.reason else ""
        call.authorized, call.refusal = None, ApprovalRejected(f"{shown.tool} was rejected{why}")
        return None
    if decision.action == "edit":
        # The person decided what runs: that answers the model's own request for approval
        # (request_approval); the edited call is asked about again only if the policy says so.
        edited = {"arguments": decision.arguments or {}, "approval_asked": None}
        return Again(call.request.model_copy(update=edited))
    try:
        current = recheck(call.request, call.deps)
        check_fresh(shown, current, now=call.deps.store.clock())
    except ApprovalStale as exc:
        call.authorized, call.refusal = None, exc
        return None
    except ExecGraphError as exc:
        # What was approved no longer holds (state guard, deadline, policy): the approval
        # is stale, whatever check noticed it first.
        stale = ApprovalStale(f"the approved call no longer holds: {exc.message}")
        call.authorized, call.refusal = None, stale
        return None
    changed = changed_targets(shown, call.request, current)
    if changed is not None and not recorded(call.request, call.deps.store):
        return Again(call.request, stale=changed)
    allowed = replace(current.decision, verdict="allow")  # its reason and rule kept
    call.authorized = replace(current, decision=allowed, approver=decision.approver)
    call.refusal = None
    return None
