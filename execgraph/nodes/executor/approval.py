"""Stage 4b — approval: what a person is asked, and whether their answer still applies.

The request binds tool version and normalized-args hash and shows the state of each
target the tool can read. Between asking and answering the world may change, so on resume
the call is re-resolved and re-validated and must still match what was shown: same
version, same hash, expected state still holding, not expired — and the same target
state, or the person is asked again about the target as it is now.

One answer per question: two people (or two workers) answering the same request at once
would otherwise both act — a payment made while the state says rejected. The store keeps
the first decision per request (:func:`decide_once`); a later answer that says the same
goes on with it, one that differs is refused with ApprovalConflict and does nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from langgraph.types import Command
from pydantic import ValidationError

from execgraph.nodes.executor.stages import Authorized
from execgraph.nodes.executor.targets import target_state
from execgraph.state.contracts import ApprovalDecision, ApprovalRequest, ToolExecutionRequest
from execgraph.state.errors import ApprovalConflict, ApprovalStale, UsageError
from execgraph.state.store.base import ExecutionStore

__all__ = [
    "RESUME_VALUES",
    "approval_request",
    "changed_targets",
    "check_fresh",
    "decide_once",
    "parse_decision",
    "require_answer",
]

RESUME_VALUES = (
    'Command(resume="approve"), Command(resume="reject"), or Command(resume={"action": '
    '"approve" | "reject" | "edit", "reason": ..., "arguments": {...}}) (keyed by the '
    "interrupt id when several are pending)"
)


def _target_state(request: ToolExecutionRequest, authorized: Authorized) -> dict[str, str]:
    validated = authorized.validated
    root = Path(request.workspace.root)
    return target_state(authorized.spec, validated.args, validated.normalized.arguments, root)


def approval_request(
    request: ToolExecutionRequest, authorized: Authorized, *, ttl_s: float, now: float | None = None
) -> ApprovalRequest:
    """The interrupt payload for ``authorized``, with its targets' current state; it expires
    at the TTL or the deadline."""
    current = time.time() if now is None else now
    expires = current + ttl_s
    if request.deadline is not None:
        expires = min(expires, request.deadline)
    normalized = authorized.validated.normalized
    return ApprovalRequest(
        run_id=request.run_id,
        call_id=request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        effect=authorized.spec.effect,
        arguments=normalized.arguments,
        args_hash=normalized.args_hash,
        reason=authorized.decision.reason,
        expires_at=expires,
        target_state=_target_state(request, authorized),
    )


def parse_decision(value: Any) -> ApprovalDecision:
    """Read a resume value; anything malformed is a rejection (fail closed)."""
    if isinstance(value, str):
        value = {"action": value}
    try:
        return ApprovalDecision.model_validate(value)
    except ValidationError:
        return ApprovalDecision(action="reject", reason="malformed approval decision")


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
