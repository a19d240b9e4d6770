"""The executor's pure half: authorize (resolve → normalize → validate → policy) and approval.

Nothing here has a side effect, so both nodes may re-run freely after an interrupt or a
crash; ``approval`` holds the executor's only ``interrupt()`` and re-checks freshness when
the person answers.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from nodes.executor.approval import approval_request, check_fresh, parse_decision
from nodes.executor.normalize import normalize
from nodes.executor.outcome import error_of
from nodes.executor.policy import authorize
from nodes.executor.resolve import resolve
from nodes.executor.results import Authorized, ExecutorDeps
from nodes.executor.trace import call_event, log_events
from nodes.executor.validate import validate
from state.contracts import ApprovalRequest, ToolExecutionRequest
from state.errors import ApprovalRejected, ApprovalStale, ExecGraphError, PolicyError
from state.events import EventType
from state.schema import ExecutorState

__all__ = [
    "approval_node",
    "authorize_node",
    "failure_payload",
    "needs_approval",
    "preview",
    "route_after_approval",
    "route_after_authorize",
]


def _check(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    spec = resolve(request, deps.registry)
    validated = validate(request, spec, normalize(request, spec))
    return authorize(request, spec, validated, deps.policy, deps.approval_secret)


def _prepared(authorized: Authorized, approved_by: str | None = None) -> dict[str, Any]:
    return {
        "tool": authorized.spec.name,
        "version": authorized.spec.version,
        "arguments": authorized.validated.normalized.arguments,
        "args_hash": authorized.validated.normalized.args_hash,
        "verdict": "allow" if approved_by else authorized.decision.verdict,
        "reason": authorized.decision.reason,
        "token_id": authorized.token_id,
        "approved_by": approved_by,
    }


def failure_payload(exc: ExecGraphError) -> dict[str, Any]:
    """A refusal as stored in the executor's private state."""
    return {"error": error_of(exc).model_dump(mode="json"), "status": str(exc.status)}


def authorize_node(state: ExecutorState, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Resolve, normalize, validate and authorize; no side effect happens here."""
    request = ToolExecutionRequest.model_validate(state["request"])
    round_ = state.get("round", 0)
    events = [
        call_event(
            request,
            EventType.TOOL_REQUESTED,
            seq=round_ or None,
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
        events.append(
            call_event(request, kind, seq=round_ or None, payload=failure_payload(exc)["error"])
        )
        return {
            "failure": failure_payload(exc),
            "prepared": None,
            "events": log_events(deps, events),
        }
    events.append(
        call_event(
            request,
            EventType.TOOL_RESOLVED,
            seq=round_ or None,
            payload={
                "tool": authorized.spec.key,
                "deprecated": authorized.spec.deprecated,
                "args_hash": authorized.validated.normalized.args_hash,
                "verdict": authorized.decision.verdict,
            },
        )
    )
    prepared = _prepared(authorized)
    approval = None
    if authorized.decision.verdict == "require_approval":
        approval = approval_request(request, authorized, ttl_s=deps.approval_ttl_s).model_dump(
            mode="json"
        )
    return {
        "prepared": prepared,
        "failure": None,
        "approval": approval,
        "events": log_events(deps, events),
    }


def route_after_authorize(state: ExecutorState) -> str:
    """Approval when the policy asks for a person; otherwise straight to execution."""
    prepared = state.get("prepared")
    if prepared and prepared["verdict"] == "require_approval":
        return "approval"
    return "execute"


def approval_node(state: ExecutorState, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Pause for a person; on resume apply approve / reject / edit, re-checking freshness."""
    request = ToolExecutionRequest.model_validate(state["request"])
    asked = ApprovalRequest.model_validate(state["approval"])
    round_ = state.get("round", 0)
    # Logged before the pause (idempotent by id), and returned with the answer, so the
    # store shows a waiting approval and the state's count still matches the store.
    asked_event = call_event(
        request, EventType.APPROVAL_REQUESTED, seq=round_, payload=asked.model_dump(mode="json")
    )
    deps.store.append_events([asked_event])
    decision = parse_decision(interrupt(asked.model_dump(mode="json")))
    answered = call_event(
        request,
        EventType.APPROVAL_RESOLVED,
        seq=round_,
        payload=decision.model_dump(mode="json"),
    )
    resolved = [asked_event, answered]
    if decision.action == "reject":
        exc = ApprovalRejected(
            f"{asked.tool} was rejected" + (f": {decision.reason}" if decision.reason else "")
        )
        return {
            "failure": failure_payload(exc),
            "prepared": None,
            "events": log_events(deps, resolved),
        }
    if decision.action == "edit":
        edited = request.model_copy(update={"arguments": decision.arguments or {}})
        return {
            "request": edited.model_dump(mode="json"),
            "prepared": None,
            "approval": None,
            "round": round_ + 1,
            "events": log_events(deps, resolved),
        }
    try:
        current = _check(request, deps)
        check_fresh(asked, current)
    except ApprovalStale as exc:
        return {
            "failure": failure_payload(exc),
            "prepared": None,
            "events": log_events(deps, resolved),
        }
    except ExecGraphError as exc:
        # What was approved no longer holds (state guard, deadline, policy): the approval
        # is stale, whatever check noticed it first.
        stale = ApprovalStale(f"the approved call no longer holds: {exc.message}")
        return {
            "failure": failure_payload(stale),
            "prepared": None,
            "events": log_events(deps, resolved),
        }
    return {
        "prepared": _prepared(current, approved_by=decision.approver),
        "events": log_events(deps, resolved),
    }


def route_after_approval(state: ExecutorState) -> str:
    """An edit is a new request: back to authorize; anything else goes to execute."""
    if state.get("failure") is None and state.get("prepared") is None:
        return "authorize"
    return "execute"


def preview(request: ToolExecutionRequest, deps: ExecutorDeps) -> Authorized:
    """Resolve, normalize, validate and authorize without any effect (a dry run).

    Raises:
        ExecGraphError: whatever the executor would refuse the request with.
    """
    return _check(request, deps)


def needs_approval(request: ToolExecutionRequest, deps: ExecutorDeps) -> bool:
    """Whether the executor will pause this request for a person."""
    try:
        return preview(request, deps).decision.verdict == "require_approval"
    except ExecGraphError:
        return False
