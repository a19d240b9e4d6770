"""Admission: a TaskSpec becomes a TaskContract, or is rejected before any model call.

A task is rejected when its frame is broken — an allowed action no tool provides, a success
check of a kind nobody can evaluate, a budget of zero, a deadline already past — so a run
never spends a model call on a task it cannot finish.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

from execgraph.nodes.checks import BUILTIN_CHECKS
from execgraph.nodes.deps import CONTROL_TOOLS, RunDeps
from execgraph.nodes.executor.validate import schema_message
from execgraph.state.contracts import BudgetKind, RunStatus, TaskContract, TaskSpec, Workspace
from execgraph.state.errors import AdmissionError, UsageError
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState

__all__ = ["DEFAULT_BUDGETS", "admit", "build_contract", "route_admitted", "run_id_of"]

DEFAULT_BUDGETS = {BudgetKind.MODEL_CALLS: 50.0, BudgetKind.TOOL_CALLS: 100.0}
"""Caps applied when a task sets none: no run may loop without limit."""


def run_id_of(config: RunnableConfig | None) -> str:
    """The run id is the LangGraph thread id."""
    configurable = (config or {}).get("configurable", {})
    return str(configurable.get("thread_id") or "run")


def build_contract(task: dict[str, Any], deps: RunDeps, run_id: str, now: float) -> TaskContract:
    """Check the task against what this runtime can do.

    Raises:
        AdmissionError: with a reason a user can act on.
    """
    try:
        spec = TaskSpec.model_validate(task)
    except ValidationError as exc:
        raise AdmissionError(f"the task is malformed: {schema_message(exc)}") from None
    available = deps.executor.registry.names()
    clashes = sorted(set(available) & set(CONTROL_TOOLS))
    if clashes:
        raise AdmissionError(f"tool names reserved for run control: {', '.join(clashes)}")
    allowed = available if spec.allowed_actions is None else list(spec.allowed_actions)
    missing = sorted(set(allowed) - set(available))
    if missing:
        raise AdmissionError(f"allowed_actions names tools that are not registered: {missing}")
    kinds = set(BUILTIN_CHECKS) | set(deps.checks)
    unknown = sorted({c.kind for c in spec.success_checks} - kinds)
    if unknown:
        raise AdmissionError(f"success checks of unknown kind: {unknown}")
    for check in spec.success_checks:
        if check.kind == "tool_succeeded" and check.target not in allowed:
            raise AdmissionError(f"success check needs tool {check.target!r}, not allowed here")
    empty = sorted(str(kind) for kind, limit in spec.budgets.items() if limit <= 0)
    if empty:
        raise AdmissionError(f"budgets must be positive; zero or less for: {empty}")
    try:  # a malformed rule refuses the task now, not a call later
        deps.executor.policy.with_rules(spec.approval_rules)
    except UsageError as exc:
        raise AdmissionError(f"approval_rules: {exc.message}") from None
    return TaskContract(
        run_id=run_id,
        actor=spec.actor,
        goal=spec.goal,
        deliverables=spec.deliverables,
        allowed_actions=sorted(allowed),
        success_checks=spec.success_checks,
        stop_conditions=spec.stop_conditions,
        budgets={**DEFAULT_BUDGETS, **spec.budgets},
        deadline=None if spec.deadline_s is None else now + spec.deadline_s,
        approval_rules=spec.approval_rules,
        data_scope=spec.data_scope,
        workspace=Workspace(id=run_id, root=deps.workspace_root),
        idempotency_key=spec.idempotency_key,
    )


def admit(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Admit the task; a rejection ends the run FAILED with the reason and no model call."""
    if state.get("contract"):
        return {}  # already admitted: a resumed or continued thread keeps its contract
    run_id = run_id_of(config)
    now = time.time()
    try:
        contract = build_contract(state.get("task") or {}, deps, run_id, now)
    except AdmissionError as exc:
        event = make_event(EventType.RUN_REJECTED, run_id, payload={"reason": exc.message})
        deps.executor.store.append_events([event])
        return {
            "status": RunStatus.FAILED.value,
            "error": {"type": exc.type, "message": exc.message},
            "output": None,
            "events": {"recent": [event.event_id]},
        }
    event = make_event(EventType.RUN_ADMITTED, run_id, payload={"goal": contract.goal})
    deps.executor.store.append_events([event])
    return {
        "contract": contract.model_dump(mode="json"),
        "status": RunStatus.RUNNING.value,
        "started_at": now,
        "turn": 0,
        "events": {"recent": [event.event_id]},
    }


def route_admitted(state: RunState) -> str:
    """Run when a contract exists; a rejected task ends at once."""
    return "run" if state.get("contract") else "end"
