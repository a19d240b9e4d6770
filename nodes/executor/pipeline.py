"""The executor's three nodes, one per durability boundary.

``authorize`` (resolve → normalize → validate → policy) is pure and may re-run freely;
``approval`` holds the only ``interrupt()`` and re-checks freshness on resume; ``execute``
(reserve → lock → invoke → outcome → evidence → commit) starts no side effect before the
durable execution record exists. Each returns only reducer fields to the caller's graph.
"""

from __future__ import annotations

import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.types import interrupt

from nodes.cancel import cancel_requested
from nodes.executor.approval import approval_request, check_fresh, parse_decision
from nodes.executor.commit import build_result, commit, failure_result
from nodes.executor.evidence import gather_evidence
from nodes.executor.invoke import invoke
from nodes.executor.lock import acquire, lock_keys
from nodes.executor.normalize import normalize
from nodes.executor.outcome import error_of, settle
from nodes.executor.policy import authorize
from nodes.executor.reconcile import in_doubt
from nodes.executor.reserve import reserve
from nodes.executor.resolve import resolve
from nodes.executor.results import Authorized, ExecutorDeps, Locked, Normalized, Validated
from nodes.executor.validate import validate
from state.contracts import ApprovalRequest, ToolError, ToolExecutionRequest, ToolResult
from state.errors import (
    ApprovalRejected,
    ApprovalTokenInvalid,
    DomainViolation,
    ExecGraphError,
    ObservationStatus,
    PolicyError,
)
from state.events import Event, EventType, make_event
from state.schema import ExecutorState
from tools.adapters.base import InvokeContext
from tools.policy import PolicyDecision

__all__ = [
    "approval_node",
    "authorize_node",
    "execute_node",
    "needs_approval",
    "preview",
    "route_after_approval",
    "route_after_authorize",
]


def _event(request: ToolExecutionRequest, type: EventType, **kw: Any) -> Event:
    return make_event(
        type,
        request.run_id,
        call_id=request.call_id,
        turn_id=request.turn_id,
        decision_id=request.decision_id,
        step_id=request.step_id,
        **kw,
    )


def _log(deps: ExecutorDeps, events: list[Event]) -> dict[str, Any]:
    deps.store.append_events(events)
    return {"recent": [e.event_id for e in events]}


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


def _failure(exc: ExecGraphError) -> dict[str, Any]:
    return {"error": error_of(exc).model_dump(mode="json"), "status": str(exc.status)}


def authorize_node(state: ExecutorState, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Resolve, normalize, validate and authorize; no side effect happens here."""
    request = ToolExecutionRequest.model_validate(state["request"])
    round_ = state.get("round", 0)
    events = [
        _event(
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
        events.append(_event(request, kind, seq=round_ or None, payload=_failure(exc)["error"]))
        return {"failure": _failure(exc), "prepared": None, "events": _log(deps, events)}
    events.append(
        _event(
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
        "events": _log(deps, events),
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
    asked_event = _event(
        request, EventType.APPROVAL_REQUESTED, seq=round_, payload=asked.model_dump(mode="json")
    )
    deps.store.append_events([asked_event])
    decision = parse_decision(interrupt(asked.model_dump(mode="json")))
    answered = _event(
        request,
        EventType.APPROVAL_RESOLVED,
        seq=round_,
        payload={
            "action": decision.action,
            "approver": decision.approver,
            "reason": decision.reason,
        },
    )
    resolved = [asked_event, answered]
    if decision.action == "reject":
        exc = ApprovalRejected(
            f"{asked.tool} was rejected" + (f": {decision.reason}" if decision.reason else "")
        )
        return {"failure": _failure(exc), "prepared": None, "events": _log(deps, resolved)}
    if decision.action == "edit":
        edited = request.model_copy(update={"arguments": decision.arguments or {}})
        return {
            "request": edited.model_dump(mode="json"),
            "prepared": None,
            "approval": None,
            "round": round_ + 1,
            "events": _log(deps, resolved),
        }
    try:
        current = _check(request, deps)
        check_fresh(asked, current)
    except ExecGraphError as exc:
        return {"failure": _failure(exc), "prepared": None, "events": _log(deps, resolved)}
    return {
        "prepared": _prepared(current, approved_by=decision.approver),
        "events": _log(deps, resolved),
    }


def route_after_approval(state: ExecutorState) -> str:
    """An edit is a new request: back to authorize; anything else goes to execute."""
    if state.get("failure") is None and state.get("prepared") is None:
        return "authorize"
    return "execute"


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
    counter = iter(range(1_000_000_000))

    def emit(kind: str, payload: dict[str, Any]) -> None:
        seq = next(counter)
        sink.append(
            _event(
                request,
                EventType.TOOL_OUTPUT,
                attempt_id=attempt_id,
                seq=seq,
                payload={"kind": kind, **payload},
            )
        )
        if writer is not None:
            writer({"call_id": request.call_id, "kind": kind, **payload})

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


def _returned(result: ToolResult, event_ids: list[str]) -> dict[str, Any]:
    return {
        "results": {result.call_id: result.model_dump(mode="json")},
        "evidence": {e.source_id: e.model_dump(mode="json") for e in result.evidence},
        "events": {"recent": event_ids},
    }


def execute_node(state: ExecutorState, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Reserve, lock, invoke, settle, gather evidence and commit — or commit a refusal."""
    request = ToolExecutionRequest.model_validate(state["request"])
    failure, prepared = state.get("failure"), state.get("prepared")
    if failure is not None or prepared is None:
        failure = failure or _failure(DomainViolation("the call was never prepared"))
        result = failure_result(
            request,
            ToolError.model_validate(failure["error"]),
            status=ObservationStatus(failure["status"]),
        )
        done = _event(
            request,
            EventType.TOOL_COMPLETED,
            payload={"outcome": result.outcome, "status": result.status},
        )
        deps.store.append_events([done])
        return _returned(result, [done.event_id])
    return _execute(request, prepared, deps)


def _execute(
    request: ToolExecutionRequest, prepared: dict[str, Any], deps: ExecutorDeps
) -> dict[str, Any]:
    attempt_id = uuid.uuid4().hex[:12]
    events: list[Event] = []
    try:
        spec = deps.registry.resolve(prepared["tool"], prepared["version"])
        args = spec.input_model.model_validate(prepared["arguments"])
        normalized_args = dict(prepared["arguments"])
        authorized = Authorized(
            spec,
            Validated(args, Normalized(normalized_args, "", prepared["args_hash"])),
            PolicyDecision("allow", prepared["reason"]),
            token_id=prepared.get("token_id"),
        )
        reserved = reserve(deps.store, request, authorized, attempt_id)
    except ExecGraphError as exc:
        return _refuse(request, deps, exc, prepared.get("version", ""))
    key = reserved.key
    if reserved.kind == "committed":
        assert reserved.record.result is not None
        return _returned(ToolResult.model_validate(reserved.record.result), [])
    owner = f"{request.run_id}:{request.call_id}"
    ctx = _context(request, deps, attempt_id, key, spec.timeout_s, events)
    if reserved.kind == "in_doubt":
        settled = in_doubt(spec, args, ctx)
        if settled is not None:
            events.append(
                _event(
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
            return _finish(request, deps, key, result, events, None)
        deps.store.restart(key, attempt_id)
    if authorized.token_id and not deps.store.use_approval_token(authorized.token_id):
        used = ApprovalTokenInvalid("approval token was already used")
        return _finish(
            request,
            deps,
            key,
            failure_result(request, used, tool_version=spec.version),
            events,
            None,
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
        )
    events.append(
        _event(request, EventType.TOOL_STARTED, attempt_id=attempt_id, payload={"tool": spec.key})
    )
    invoked = invoke(
        spec, args, ctx, deps.pool, partial(cancel_requested, deps.store, request.run_id)
    )
    settled = settle(spec, invoked, deps.output_budget, ctx.put_artifact)
    settled = gather_evidence(spec, args, settled, invoked.output, ctx)
    if settled.side_effect.attempted:
        events.append(
            _event(
                request,
                EventType.TOOL_SIDE_EFFECT_OBSERVED,
                attempt_id=attempt_id,
                payload=settled.side_effect.model_dump(mode="json"),
            )
        )
    if settled.reconciled:
        events.append(
            _event(
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
    )
    return _finish(request, deps, key, result, events, locked)


def _refuse(
    request: ToolExecutionRequest, deps: ExecutorDeps, exc: ExecGraphError, version: str
) -> dict[str, Any]:
    result = failure_result(request, exc, tool_version=version)
    done = _event(
        request,
        EventType.TOOL_COMPLETED,
        payload={"outcome": result.outcome, "status": result.status},
    )
    deps.store.append_events([done])
    return _returned(result, [done.event_id])


def _finish(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    key: str,
    result: ToolResult,
    events: list[Event],
    locked: Locked | None,
) -> dict[str, Any]:
    events.append(
        _event(
            request,
            EventType.TOOL_COMPLETED,
            attempt_id=result.attempt_id,
            payload={"outcome": result.outcome, "status": result.status},
        )
    )
    final = commit(deps.store, key, result, events, locked)
    return _returned(final, [e.event_id for e in events])


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
