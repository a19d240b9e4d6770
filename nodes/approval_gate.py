"""A fixed approval node's core: show the exact calls, get one answer, mint tokens.

Used where an architecture puts approval in its shape (hybrid's publish) rather than
leaving it to the executor's per-call interrupt. Each approved call gets a signed,
single-use token bound to its tool version and normalized-args hash; the executor
verifies it, so what runs is exactly what the person saw.
"""

from __future__ import annotations

from langgraph.types import interrupt

from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import make_request
from execgraph.nodes.executor.approval import approval_request, parse_decision
from execgraph.nodes.executor.pipeline import preview
from execgraph.nodes.executor.tokens import issue_token
from execgraph.state.contracts import Decision, TaskContract
from execgraph.state.errors import ExecGraphError
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState

__all__ = ["approval_tokens"]

_MAX_EDITS = 3


def approval_tokens(
    state: RunState,
    deps: RunDeps,
    contract: TaskContract,
    calls: list[Decision],
    turn_id: str,
) -> tuple[dict[str, str], list[Decision], str]:
    """Ask about each call in turn; returns (tokens by call id, the calls to run, action).

    Each pause is an ordinary :class:`ApprovalRequest` interrupt, so every client that
    answers the executor's approvals answers these too. An *edit* replaces the call's
    arguments and is shown again (validated and normalized anew); a rejection of any call
    stops the whole publication.
    """
    tokens: dict[str, str] = {}
    approved: list[Decision] = []
    for decision in calls:
        for round_ in range(_MAX_EDITS + 1):
            request = make_request(contract, decision, turn_id, allowed=state.get("offered"))
            try:
                authorized = preview(request, deps.executor)
            except ExecGraphError:
                approved.append(decision)  # the executor refuses it with a typed error
                break
            ask = approval_request(request, authorized, ttl_s=deps.executor.approval_ttl_s)
            answer = parse_decision(interrupt(ask.model_dump(mode="json")))
            answered = make_event(
                EventType.APPROVAL_RESOLVED,
                contract.run_id,
                call_id=request.call_id,
                seq=f"gate-{round_}",
                payload=answer.model_dump(mode="json"),
            )
            deps.executor.store.append_events([answered])
            if answer.action == "reject":
                return {}, [], "reject"
            if answer.action == "edit":
                decision = decision.model_copy(update={"arguments": answer.arguments or {}})
                continue
            tokens[request.call_id] = issue_token(
                deps.executor.approval_secret,
                tool_key=authorized.spec.key,
                args_hash=ask.args_hash,
                ttl_s=deps.executor.approval_ttl_s,
            )
            approved.append(decision)
            break
        else:
            return {}, [], "reject"  # edited too many times without an approval
    return tokens, approved, "approve"
