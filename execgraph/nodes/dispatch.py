"""Dispatch: admitted tool decisions -> one executor request each, budget reserved first.

A batch is reserved whole before any call starts, so parallel calls can never overshoot
a budget: it must fit the tool calls left and the cost left (what its tools declare),
and the run must have time left, or the run stops with BUDGET_EXHAUSTED and nothing of it
runs. Each request carries the run's deadline (the contract's, or the end of its
``wall_time_s`` budget, whichever is first): the batch's calls run side by side, each
stopped at that deadline at the latest, so a batch that starts ends in the run's time
(plus the grace a tool that ignores its signal is given). The fan-out is
``execgraph.nodes.batching``'s.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Send

from execgraph.nodes.admission import run_id_of
from execgraph.nodes.batching import executor_sends
from execgraph.nodes.budget import batch_misfit, charge, declared_cost, remaining, run_deadline
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.executor import needs_approval
from execgraph.nodes.expected_state import guard_writes
from execgraph.nodes.verify import stop_update
from execgraph.state.contracts import (
    BudgetKind,
    Decision,
    DecisionKind,
    RunStatus,
    TaskContract,
    ToolExecutionRequest,
    ToolRef,
)
from execgraph.state.schema import RunState
from execgraph.state.updates import merge
from execgraph.state.waits import WaitRule

__all__ = ["ACTIONS", "dispatch", "fan_out", "make_request", "queue_calls", "tool_calls"]

ACTIONS = (DecisionKind.TOOL_CALL.value, DecisionKind.REQUEST_APPROVAL.value)
"""The decision kinds that propose a call the executor runs: a tool call, and one the
model asked a person to approve first (``request_approval``)."""


def make_request(
    contract: TaskContract,
    decision: Decision,
    turn_id: str,
    step_id: str | None = None,
    allowed: list[str] | None = None,
    deadline: float | None = None,
) -> ToolExecutionRequest:
    """The executor request for one tool decision, bound to the contract.

    ``allowed`` narrows the contract's actions to what the current step offered (a workflow
    stage, a hybrid phase): a tool the model names outside it is refused, not run.
    ``deadline`` is the run's (:func:`execgraph.nodes.budget.run_deadline`; default: the
    contract's).
    """
    return ToolExecutionRequest(
        run_id=contract.run_id,
        turn_id=turn_id,
        call_id=decision.call_id or decision.decision_id,
        decision_id=decision.decision_id,
        step_id=step_id,
        tool=ToolRef(name=decision.tool_name or ""),
        arguments=decision.arguments,
        actor=contract.actor,
        workspace=contract.workspace,
        deadline=deadline if deadline is not None else contract.deadline,
        data_scope=contract.data_scope,
        allowed_actions=contract.allowed_actions
        if allowed is None
        else [a for a in contract.allowed_actions if a in allowed],
        approval_rules=contract.approval_rules,
        task_key=contract.idempotency_key,
        tool_call_id=decision.tool_call_id,
        max_argument_bytes=contract.max_argument_bytes,
        wait=_wait_rule(contract, decision.tool_name or ""),
        approval_asked=decision.content if decision.kind is DecisionKind.REQUEST_APPROVAL else None,
    )


def _wait_rule(contract: TaskContract, tool: str) -> WaitRule | None:
    """The contract's rule for waiting on a person's approval of ``tool`` (None: the
    executor's default)."""
    rule = contract.waits.for_tool(tool)
    return None if rule == WaitRule() else rule


def queue_calls(
    state: RunState,
    deps: RunDeps,
    calls: list[Decision],
    turn_id: str,
    charge_id: str,
    tokens: dict[str, str] | None = None,
    steps: dict[str, str] | None = None,
    allowed: list[str] | None = None,
) -> dict[str, Any]:
    """Reserve the budget for ``calls`` (all or none) and queue their requests.

    ``tokens`` maps call ids to signed approval tokens given before dispatch; ``steps``
    maps call ids to plan step ids; ``allowed`` is the step's offered tools (None: the
    whole contract).
    """
    contract = TaskContract.model_validate(state["contract"])
    cost = 0.0
    if BudgetKind.COST_USD in contract.budgets:
        cost = declared_cost((d.tool_name or "" for d in calls), deps.executor.registry)
    reason = batch_misfit(contract, state, len(calls), cost)
    if reason is not None:
        stop = stop_update(state, contract, deps, RunStatus.BUDGET_EXHAUSTED, reason)
        return merge([stop, {"pending": []}])
    deadline = run_deadline(contract, state)
    requests = [
        make_request(contract, d, turn_id, (steps or {}).get(d.call_id or ""), allowed, deadline)
        for d in calls
    ]
    left = remaining(contract, state, BudgetKind.TOOL_CALLS)
    if left is not None:  # retries share what the batch leaves, so none overshoots it
        share = max(0, int(left) - len(calls)) // len(calls)
        requests = [r.model_copy(update={"retry_allowance": share}) for r in requests]
    # a write of a target this run has read carries what it saw (compare-and-swap)
    requests = guard_writes(requests, deps.executor.registry, state.get("evidence"))
    if tokens:
        requests = [
            r.model_copy(update={"approval_token": tokens.get(r.call_id)}) for r in requests
        ]
    waiting = any(needs_approval(r, deps.executor) for r in requests)
    return {
        # defaults left out: the requests are in this turn's checkpoints and Send packets
        "pending": [r.model_dump(mode="json", exclude_defaults=True) for r in requests],
        "budget": charge(charge_id, tool_calls=len(calls)),
        "status": (RunStatus.WAITING if waiting else RunStatus.RUNNING).value,
    }


def tool_calls(state: RunState) -> list[Decision]:
    """This turn's tool-call decisions (those the model asked a person about too)."""
    decisions = [Decision.model_validate(d) for d in state.get("decisions") or []]
    return [d for d in decisions if d.kind in ACTIONS]


def dispatch(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Queue one request per tool decision of this turn, budget reserved first."""
    turn_id = f"t{state.get('turn', 0)}"
    charge_id = f"{run_id_of(config)}:{turn_id}:dispatch"
    return queue_calls(
        state, deps, tool_calls(state), turn_id, charge_id, allowed=state.get("offered")
    )


def fan_out(state: RunState, *, deps: RunDeps) -> list[Send] | str:
    """The queued requests to the executor (see ``execgraph.nodes.batching``); straight
    on if none."""
    pending = state.get("pending") or []
    if not pending:
        return "observe"
    return executor_sends(pending, deps.executor)
