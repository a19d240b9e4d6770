"""A fixed approval node's core: show the exact calls, get one answer, mint tokens.

Used where an architecture puts approval in its shape (hybrid's publish) rather than
leaving it to the executor's per-call interrupt. Each approved call gets a signed,
single-use token bound to its tool version and normalized-args hash; the executor
verifies it, so what runs is exactly what the person saw.
"""

from __future__ import annotations

from langgraph.types import interrupt

from nodes.dispatch import make_request
from nodes.executor.approval import approval_request, parse_decision
from nodes.executor.pipeline import preview
from nodes.executor.tokens import issue_token
from nodes.runtime import RunDeps
from state.contracts import Decision, TaskContract
from state.errors import ExecGraphError
from state.schema import RunState

__all__ = ["approval_tokens"]


def approval_tokens(
    state: RunState,
    deps: RunDeps,
    contract: TaskContract,
    calls: list[Decision],
    turn_id: str,
) -> tuple[dict[str, str], str]:
    """Ask once for all ``calls``; returns (tokens by call id, the person's action)."""
    asked, keys = [], {}
    for decision in calls:
        request = make_request(contract, decision, turn_id)
        try:
            authorized = preview(request, deps.executor)
        except ExecGraphError:
            continue  # the executor will refuse it with a typed error; nothing to approve
        ask = approval_request(request, authorized, ttl_s=deps.executor.approval_ttl_s)
        asked.append(ask.model_dump(mode="json"))
        keys[request.call_id] = (authorized.spec.key, ask.args_hash)
    if not asked:
        return {}, "approve"
    answer = parse_decision(
        interrupt({"kind": "approval_batch", "run_id": contract.run_id, "calls": asked})
    )
    if answer.action != "approve":
        return {}, answer.action
    tokens = {
        call_id: issue_token(
            deps.executor.approval_secret,
            tool_key=key,
            args_hash=args_hash,
            ttl_s=deps.executor.approval_ttl_s,
        )
        for call_id, (key, args_hash) in keys.items()
    }
    return tokens, "approve"
