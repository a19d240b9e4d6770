"""The least-privilege contract: capabilities planned from the request, then frozen.

With ``build_graph(..., contract="least_privilege")``, admission asks the model one extra
question before the run starts: given only the user's request and the tools' declarations
(no state, no earlier conversation, no tool output), which tools does the task need, and
what may their sensitive arguments be? The answer (:mod:`execgraph.tools.capabilities`)
narrows the contract: its ``allowed_actions`` become the planned tools and its argument
rules the planned constraints. The executor enforces the contract on every call, so
nothing the run reads afterwards — an injection in an email, a revised plan — can widen
it. A planner that gives no usable answer leaves the run no tools at all (closed).

The planner's reply is logged as a ``model.called`` event (turn ``capabilities``) and
replayed if admission runs again, and it is charged to the run's budget like any turn.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

from execgraph.nodes.deps import RunDeps
from execgraph.nodes.model.call import call_model, recorded_replies
from execgraph.state.contracts import BudgetKind, TaskContract
from execgraph.tools.capabilities import (
    CAPABILITIES_TOOL,
    Capabilities,
    capabilities_schema,
    freeze,
)

__all__ = ["FROZEN_FIELDS", "PLANNER_INSTRUCTION", "freeze_capabilities"]

FROZEN_FIELDS = ("allowed_actions", "approval_rules")
"""What the planned capabilities set in a contract (so a task admitted again differs
from the frozen contract there without the task having changed)."""

PLANNER_INSTRUCTION = (
    "Plan the capabilities this task needs before anything is read. You see only the "
    "user's request and the tools. Call submit_capabilities with every tool the task "
    "needs (and no other), and for each argument that says where an effect goes "
    "(recipients, accounts, URLs, ids of things changed or deleted): the values the "
    "request names, or the tool (and its arguments) whose output the value will be read "
    "from. Nothing you do not list will be allowed."
)


def _catalog(contract: TaskContract, deps: RunDeps) -> str:
    lines = []
    for spec in deps.executor.registry.latest():
        if spec.name not in contract.allowed_actions:
            continue
        params = json.dumps(spec.input_model.model_json_schema().get("properties", {}))
        sensitive = f" sensitive={list(spec.sensitive_args)}" if spec.sensitive_args else ""
        lines.append(f"- {spec.name} ({spec.effect}){sensitive}: {spec.description} {params}")
    return "\n".join(lines)


def _parse(ai: AIMessage) -> tuple[Capabilities | None, str | None]:
    calls = [c for c in ai.tool_calls if c["name"] == CAPABILITIES_TOOL]
    if len(calls) != 1:
        return None, f"call {CAPABILITIES_TOOL} exactly once"
    try:
        return Capabilities.model_validate(calls[0]["args"]), None
    except ValidationError as exc:
        return None, f"{CAPABILITIES_TOOL}: {exc.errors()[0]['msg']}"


def freeze_capabilities(
    contract: TaskContract, deps: RunDeps, config: RunnableConfig, seq: int | str = 1
) -> tuple[TaskContract, dict[str, Any]]:
    """The contract narrowed to the planned capabilities, and the update to record.

    The update holds the planner's events and budget charge (``events`` and ``budget``)
    and, under ``capabilities``, what was frozen (for the ``run.admitted`` event). ``seq``
    tells one admission on the thread from another (its replies are logged apart).
    """
    turn_id = "capabilities" if seq in (1, "1") else f"capabilities{seq}"
    messages = [
        SystemMessage(f"{PLANNER_INSTRUCTION}\n\nTools:\n{_catalog(contract, deps)}"),
        HumanMessage(contract.goal),
    ]
    left = contract.budgets.get(BudgetKind.MODEL_CALLS)
    result = call_model(
        deps.model.bind_tools([capabilities_schema()], tool_choice=CAPABILITIES_TOOL),
        messages,
        _parse,
        max_repairs=deps.max_repairs,
        left=left,
        run_id=contract.run_id,
        turn_id=turn_id,
        config=config,
        recorded=recorded_replies(deps.executor.store, contract.run_id, turn_id),
    )
    deps.executor.store.append_events(result.events)
    update: dict[str, Any] = {
        "budget": result.charge(f"{turn_id}:plan"),
        "events": {"recent": [e.event_id for e in result.events]},
    }
    planned = result.parsed if result.problem is None else None
    if planned is None:
        update["capabilities"] = {"tools": [], "rules": [], "problem": result.problem}
        return contract.model_copy(update={"allowed_actions": []}), update
    registry = deps.executor.registry
    tools, rules = freeze(
        planned,
        contract.allowed_actions,
        fallback=deps.executor.policy.checks.sensitive_fallback,
        arguments_of={s.name: list(s.input_model.model_fields) for s in registry.latest()},
        effects={s.name: s.effect for s in registry.latest()},
    )
    update["capabilities"] = {"tools": tools, "rules": rules}
    narrowed = contract.model_copy(
        update={"allowed_actions": tools, "approval_rules": [*contract.approval_rules, *rules]}
    )
    return narrowed, update
