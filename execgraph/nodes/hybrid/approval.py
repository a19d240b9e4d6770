"""The ``approve`` node: the fixed approval node every publish call of hybrid passes.

Here approval is in the graph's shape rather than left to the executor's per-call
interrupt: the node shows the exact calls, gets an answer for each and mints tokens. Each
call is decided on its own, as the executor decides each call of a batch: an approved
call gets a signed, single-use token bound to its tool version and normalized-args hash
(the executor verifies it, so what runs is exactly what the person saw); a rejected call
runs nothing and ends as a ``failed`` result at phase ``policy`` (:func:`rejected_results`),
which the model is shown. A run cancelled meanwhile publishes nothing. With tools off
(``RunDeps.tools_enabled``) nothing was offered, so no person is asked: the executor
refuses each call.

An approval applies only while it still fits, by the executor's rule
(:mod:`execgraph.nodes.executor.stages.approval`): the question is logged before the
pause and, on resume, the logged one is what the answer is about (the node runs again
from its start, and the world may have moved). An approved call whose tool version or
arguments no longer match is refused as stale; one whose target changed while the person
decided (a file someone else wrote) is asked again, showing the target as it is now, and
is never run on the old approval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import interrupt

from execgraph.nodes.cancel import cancel_requested, request_cancel
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import make_request, queue_calls, tool_calls
from execgraph.nodes.executor import (
    Gate,
    approval_request,
    calls_update,
    decide_once,
    execute,
    issue_token,
    parse_decision,
    preview,
)
from execgraph.nodes.executor.stages.approval import changed_targets, check_fresh
from execgraph.nodes.executor.stages.expiry import Escalated
from execgraph.state.contracts import (
    ApprovalRequest,
    Decision,
    RunStatus,
    TaskContract,
    ToolExecutionRequest,
)
from execgraph.state.errors import ApprovalRejected, ApprovalStale, ExecGraphError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.schema import RunState
from execgraph.state.updates import merge

__all__ = ["GateAnswers", "approval_tokens", "approve", "rejected_results"]

_MAX_EDITS = 3


@dataclass
class GateAnswers:
    """What a person decided about a batch, call by call.

    Attributes:
        tokens: Approval tokens by call id.
        approved: The calls to run (as last edited); a call the executor will refuse
            anyway is here without a token, so the refusal is the executor's.
        rejected: The calls not to run, each with why (a person's reason).
    """

    tokens: dict[str, str] = field(default_factory=dict)
    approved: list[Decision] = field(default_factory=list)
    rejected: list[tuple[Decision, str]] = field(default_factory=list)


def approval_tokens(
    state: RunState,
    deps: RunDeps,
    contract: TaskContract,
    calls: list[Decision],
    turn_id: str,
) -> GateAnswers:
    """Ask about each call in turn and keep each answer for that call alone.

    Each pause is an ordinary :class:`ApprovalRequest` interrupt, so every client that
    answers the executor's approvals answers these too. An *edit* replaces the call's
    arguments and is shown again (validated and normalized anew); a rejection rejects that
    call only, and so does editing one more than ``_MAX_EDITS`` times.
    """
    answers = GateAnswers()
    for decision in calls:
        stale: ApprovalStale | None = None
        for round_ in range(_MAX_EDITS + 1):
            request = make_request(contract, decision, turn_id, allowed=state.get("offered"))
            try:
                authorized = preview(request, deps.executor)
            except ExecGraphError:
                answers.approved.append(decision)  # the executor refuses it with a typed error
                break
            ask = _question(deps, request.run_id, request.call_id, round_)
            if ask is None:
                ask = approval_request(
                    request,
                    authorized,
                    ttl_s=deps.executor.approval_ttl_s,
                    now=deps.executor.store.clock(),
                )
                if stale is not None:
                    reason = f"asked again: {stale.message} ({ask.reason})"
                    ask = ask.model_copy(update={"reason": reason})
                if isinstance(stale, Escalated):  # asked once more, of someone else
                    ask = ask.model_copy(update={"escalated_to": stale.to, "on_expiry": "reject"})
                _log_question(deps, ask, round_)
            answer = parse_decision(interrupt(ask.model_dump(mode="json")))
            asked_id = make_event(
                EventType.APPROVAL_RESOLVED,
                contract.run_id,
                call_id=request.call_id,
                seq=f"gate-{round_}",
            ).event_id
            answer = decide_once(deps.executor.store, asked_id, answer)  # the first one stands
            answered = make_event(
                EventType.APPROVAL_RESOLVED,
                contract.run_id,
                call_id=request.call_id,
                seq=f"gate-{round_}",
                payload=answer.model_dump(mode="json"),
            )
            deps.executor.store.append_events([answered])
            if ask.expires_at is not None and deps.executor.store.clock() > ask.expires_at:
                stale = _expired_gate(deps, request, ask)  # a late answer does not count
                if isinstance(stale, Escalated):
                    continue
                answers.rejected.append((decision, stale.message))
                break
            if answer.action == "reject":
                why = f"{ask.tool} was rejected" + (f": {answer.reason}" if answer.reason else "")
                answers.rejected.append((decision, why))
                break
            if answer.action == "edit":
                decision = decision.model_copy(update={"arguments": answer.arguments or {}})
                stale = None
                continue
            try:
                check_fresh(ask, authorized, now=deps.executor.store.clock())
            except ApprovalStale as exc:
                answers.rejected.append((decision, exc.message))
                break
            stale = changed_targets(ask, request, authorized)
            if stale is not None:  # the target moved while the person decided: ask again
                continue
            answers.tokens[request.call_id] = issue_token(
                deps.executor.approval_secret,
                tool_key=authorized.spec.key,
                args_hash=ask.args_hash,
                ttl_s=deps.executor.approval_ttl_s,
            )
            answers.approved.append(decision)
            break
        else:
            why = f"{decision.tool_name} was asked {_MAX_EDITS + 1} times without an approval"
            if stale is not None:
                why += f" that still held ({stale.message})"
            answers.rejected.append((decision, why))
    return answers


def _expired_gate(
    deps: RunDeps, request: ToolExecutionRequest, ask: ApprovalRequest
) -> ApprovalStale:
    """The expiry policy of a gate question answered past its deadline: escalated once
    (:class:`Escalated`: ask again), else refused, and with ``cancel`` the run cancelled."""
    if ask.on_expiry == "escalate" and ask.escalated_to is None:
        to = (request.wait.escalate_to if request.wait is not None else "") or "another approver"
        return Escalated(f"expired unanswered; escalated to {to}", to)
    why = f"the approval of {ask.tool} expired unanswered"
    if ask.on_expiry == "cancel":
        request_cancel(deps.executor.store, request.run_id, why)
    return ApprovalStale(why)


def _question_event(
    run_id: str, call_id: str, round_: int, payload: dict[str, Any] | None = None
) -> Event:
    return make_event(
        EventType.APPROVAL_REQUESTED, run_id, call_id=call_id, seq=f"gate-{round_}", payload=payload
    )


def _question(deps: RunDeps, run_id: str, call_id: str, round_: int) -> ApprovalRequest | None:
    """The question logged before this round's pause, if it was asked: the answer is about
    what the person saw, not about the call as it is derived again on resume."""
    logged = deps.executor.store.event(_question_event(run_id, call_id, round_).event_id)
    if logged is None or not logged.payload:
        return None
    return ApprovalRequest.model_validate(logged.payload)


def _log_question(deps: RunDeps, ask: ApprovalRequest, round_: int) -> None:
    """Log what the person is shown, before the pause (the store then shows it waiting)."""
    event = _question_event(ask.run_id, ask.call_id, round_, ask.model_dump(mode="json"))
    deps.executor.store.append_events([event])


def rejected_results(
    contract: TaskContract,
    refused: Sequence[tuple[Decision, str]],
    turn_id: str,
    deps: RunDeps,
) -> dict[str, Any]:
    """Each refused call's result, as the executor records a call a person rejected: a
    ``failed`` ToolResult at phase ``policy`` (an :class:`ApprovalRejected`), nothing run,
    its end logged."""
    finished = [
        execute(
            make_request(contract, decision, turn_id),
            Gate((), failure=ApprovalRejected(why)),
            deps.executor,
        )
        for decision, why in refused
    ]
    return calls_update(finished, deps.executor) if finished else {}


def approve(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """The fixed approval node: a person approves or rejects each exact publish call.

    Approval yields signed single-use tokens bound to each call's tool version and
    normalized arguments, so the executor runs exactly what was shown and does not ask
    twice. A rejected call is not run: its ``failed`` result goes to the model with the
    others'. A run cancelled before the node asks (or while it waits) runs none of them.
    """
    contract = TaskContract.model_validate(state["contract"])
    calls = tool_calls(state)
    turn_id = f"t{state.get('turn', 0)}"
    if not deps.tools_enabled:  # nothing was offered: no person is asked, the executor refuses
        refused = queue_calls(state, deps, calls, turn_id, f"{turn_id}:publish", allowed=[])
        return merge([refused, {"phase": "publish"}])
    if cancel_requested(deps.executor.store, contract.run_id):
        why = "was not run: the run was cancelled"
        answers = GateAnswers(rejected=[(c, f"{c.tool_name} {why}") for c in calls])
    else:
        answers = approval_tokens(state, deps, contract, calls, turn_id)
    refused = rejected_results(contract, answers.rejected, turn_id, deps)
    queued: dict[str, Any] = {"pending": [], "status": RunStatus.RUNNING.value}
    if answers.approved:
        queued = queue_calls(
            state,
            deps,
            answers.approved,
            turn_id,
            f"{turn_id}:publish",
            tokens=answers.tokens,
            allowed=state.get("offered"),
        )
    return merge([refused, queued, {"phase": "publish"}])
