"""Admission: a TaskSpec becomes a TaskContract, or is rejected before any model call.

A task is rejected when its frame is broken — an allowed action no tool provides, a success
check of a kind nobody can evaluate, a budget of zero, a deadline already past — so a run
never spends a model call on a task it cannot finish.

The request is the input's task, or its last human message (:mod:`execgraph.nodes.run_input`).
A thread runs one request at a time: while its run is under way (``RUNNING``, ``WAITING``)
the run keeps its contract, whatever the input. Once it has finished, a new request on
the thread — the next human message, as with ``create_agent``, or a different task —
starts the thread's next run: a new contract (the same run id, the thread's), a fresh
budget, loop guard and plan, while the thread's record stays (its events, results and
evidence in the store, the bounded windows in state, the conversation and the turns the
model sees). Turn and call ids keep counting, so nothing of the earlier run is replayed
or mistaken for the new one's. The same input again is asked again, as a ``create_agent``
graph runs again on every ``invoke``: a fresh run of the thread's task (to read a
finished run's result, use ``get_state``; to continue a paused one, ``invoke(None, ...)``
or ``Command(resume=...)``). A thread whose run was cancelled takes no new request: a
cancel request stands for the thread, so the caller is told to use a new ``thread_id``.

Each admitted request is also a record in the turns the model sees (``history``: the
request's text, after the turns before it), so a thread's next run shows the model the
earlier requests beside the earlier replies (:mod:`execgraph.nodes.context.projection`).
"""

from __future__ import annotations

import math
import time
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite
from pydantic import ValidationError

from execgraph.nodes.cancel import cancel_requested
from execgraph.nodes.checks import BUILTIN_CHECKS
from execgraph.nodes.clarify import clarify
from execgraph.nodes.context.requests import request_record
from execgraph.nodes.deps import CONTROL_TOOLS, RunDeps
from execgraph.nodes.executor import schema_message
from execgraph.nodes.least_privilege import freeze_capabilities
from execgraph.nodes.model.prices import prices_of
from execgraph.nodes.release import check_release, check_task_release
from execgraph.nodes.run_input import Request, new_request, read_request
from execgraph.state.contracts import BudgetKind, RunStatus, TaskContract, TaskSpec, Workspace
from execgraph.state.errors import AdmissionError, DependencyUnavailable, UsageError
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState
from execgraph.tools.requirements import unmet

__all__ = ["DEFAULT_BUDGETS", "admit", "build_contract", "route_admitted", "run_id_of"]

DEFAULT_BUDGETS = {BudgetKind.MODEL_CALLS: 50.0, BudgetKind.TOOL_CALLS: 100.0}
"""Caps applied when a task sets none: no run may loop without limit."""


def run_id_of(config: RunnableConfig | None) -> str:
    """The run id is the LangGraph thread id."""
    configurable = (config or {}).get("configurable", {})
    return str(configurable.get("thread_id") or "run")


def build_contract(
    task: dict[str, Any], deps: RunDeps, run_id: str, now: float, *, priced: bool = True
) -> TaskContract:
    """Check the task against what this runtime can do.

    ``priced``: whether the run has a price table for its model's replies. A ``cost_usd``
    budget without one is refused: it would measure the tools' declared costs and nothing
    of the model's, and let the run spend without limit.

    Raises:
        AdmissionError: with a reason a user can act on.
    """
    try:
        spec = TaskSpec.model_validate(task)
    except ValidationError as exc:
        raise AdmissionError(f"the task is malformed: {schema_message(exc)}") from None
    if BudgetKind.COST_USD in spec.budgets and not priced:
        raise AdmissionError(
            "a cost_usd budget needs the price of the model's replies: pass "
            "build_graph(..., prices={MODEL: {'input_per_mtok': ..., 'output_per_mtok': ...}}) "
            "with MODEL the name the model reports in its replies (0 for a free model)"
        )
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
    _check_limits(spec)
    _check_dependencies(deps, allowed)
    try:  # a malformed rule refuses the task now, not a call later
        deps.executor.policy.with_rules(spec.approval_rules)
    except UsageError as exc:
        raise AdmissionError(f"approval_rules: {exc.message}") from None
    release = check_task_release(spec.release_ref, deps.release_ref)
    return TaskContract(
        release_ref=release,
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
        max_argument_bytes=spec.max_argument_bytes,
        waits=spec.waits,
    )


def _check_dependencies(deps: RunDeps, allowed: list[str]) -> None:
    """Every need declared by a tool the run may use is there (``ToolSpec.requires``).

    Raises:
        DependencyUnavailable: naming each need that is not, before any model call.
    """
    wanted = set(allowed)
    needs = [r for s in deps.executor.registry.latest() if s.name in wanted for r in s.requires]
    missing = unmet(needs) if needs else []
    if missing:
        raise DependencyUnavailable(
            "tools this task may use need what is not there: " + "; ".join(missing)
        )


def _check_limits(spec: TaskSpec) -> None:
    """Every budget and the deadline a finite positive number: NaN compares false with
    every limit and infinity never runs out, so either would silently disable its cap.

    Raises:
        AdmissionError: naming each field that is not.
    """
    bad = {f"budgets.{kind}": v for kind, v in spec.budgets.items() if not 0 < v < math.inf}
    if spec.deadline_s is not None and not math.isfinite(spec.deadline_s):
        bad["deadline_s"] = spec.deadline_s
    if bad:
        named = ", ".join(f"{field} = {value:g}" for field, value in sorted(bad.items()))
        raise AdmissionError(f"budgets must be positive and finite, deadline_s finite; got {named}")


def _finished(state: RunState) -> bool:
    status = state.get("status")
    return status is not None and RunStatus(status).terminal


def _fresh_start(state: RunState) -> dict[str, Any]:
    """What a thread's next run starts without: the last run's verdict and position, and
    the counters its limits apply to (budget, loop guard) and its plan, emptied.

    The plan keeps its version with no steps, so the next plan's version (and the ids
    of its steps' calls) follows the last one's instead of meeting its records again.
    """
    plan = state.get("plan")
    emptied = None if plan is None else {"version": plan.get("version", 0), "steps": []}
    return {
        "output": None,
        "structured_response": None,
        "error": None,
        "verification": None,
        "open_items": [],
        "trigger": None,
        "decisions": [],
        "pending": [],
        "offered": None,
        "plan": Overwrite(emptied),
        "budget": Overwrite({"used": {}, "charges": []}),
        "progress": Overwrite({}),
    }


def admit(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Admit the input's request; a rejection ends the run FAILED with the reason and no
    model call. A finished thread given a new request starts its next run (see above)."""
    if state.get("contract") or state.get("admitted"):
        if not _finished(state):
            check_release(state, deps.release_ref)  # only the release it was admitted under
            return {}  # a resumed or continued run keeps its contract
        request = new_request(state)
        if request is None:
            return {}  # a thread admitted before requests were recorded keeps its run
        return _next_run(state, request, run_id_of(config), deps, config)
    return _admit(state, read_request(state), run_id_of(config), deps, config)


def _next_run(
    state: RunState, request: Request, run_id: str, deps: RunDeps, config: RunnableConfig
) -> dict[str, Any]:
    if cancel_requested(deps.executor.store, run_id):
        reason = (
            f"run {run_id} was cancelled, and a cancel request stands for its thread: "
            "send the new request on a new thread_id"
        )
        event = _event(EventType.RUN_REJECTED, run_id, request, {"reason": reason})
        deps.executor.store.append_events([event])
        return {
            "error": {"type": AdmissionError.__name__, "message": reason},
            "admitted": request.admitted,
            "events": {"recent": [event.event_id]},
        }
    update = _admit(state, request, run_id, deps, config)
    # A terminal status is sticky (``sticky_status``): the next run overwrites it.
    update["status"] = Overwrite(update["status"])
    if update.get("contract") is None:
        return {**update, "contract": None}
    if "cursor" in state:
        update["cursor"] = 0  # a fixed workflow starts again at its first stage
    fresh = _fresh_start(state)
    if "budget" in update:  # the planner's charge, on the emptied counters
        fresh["budget"] = Overwrite(update.pop("budget"))
    return {**fresh, **update}


def _event(type: EventType, run_id: str, request: Request, payload: dict[str, Any]) -> Any:
    seq = request.seq if request.seq > 1 else None  # the first run's ids as they always were
    return make_event(type, run_id, seq=seq, payload=payload)


def _admit(
    state: RunState, request: Request, run_id: str, deps: RunDeps, config: RunnableConfig
) -> dict[str, Any]:
    now = time.time()
    try:
        if not request.spec:
            raise AdmissionError("nothing was asked: give a task with a goal, or a human message")
        priced = bool(prices_of(config))
        contract = build_contract(request.spec, deps, run_id, now, priced=priced)
        if request.spec.get("required_slots"):  # asks the user first (clarify.py)
            task = TaskSpec.model_validate(request.spec)
            contract = clarify(contract, task.required_slots, task.slots)
    except AdmissionError as exc:
        event = _event(EventType.RUN_REJECTED, run_id, request, {"reason": exc.message})
        deps.executor.store.append_events([event])
        return {
            "status": RunStatus.FAILED.value,
            "error": {"type": exc.type, "message": exc.message},
            "output": None,
            "admitted": request.admitted,
            "events": {"recent": [event.event_id]},
        }
    planned: dict[str, Any] = {}
    if deps.contract == "least_privilege":
        contract, planned = freeze_capabilities(contract, deps, config, request.seq)
    payload = {
        "goal": contract.goal,
        "seq": request.seq,
        **({"capabilities": planned["capabilities"]} if planned else {}),
    }
    event = _event(EventType.RUN_ADMITTED, run_id, request, payload)
    deps.executor.store.append_events([event])
    update: dict[str, Any] = {
        "contract": contract.model_dump(mode="json"),
        "status": RunStatus.RUNNING.value,
        "started_at": now,
        "admitted": request.admitted,
        "events": {"recent": [*planned.get("events", {}).get("recent", []), event.event_id]},
        "history": [
            request_record(
                request.seq,
                int(state.get("turn", 0)),
                contract.goal,
                request.admitted.get("message"),
            )
        ],
    }
    if planned:
        update["budget"] = planned["budget"]
    if "turn" not in state:
        update["turn"] = 0  # a thread's next run keeps counting turns: ids stay unique
    if request.from_message:
        update["task"] = request.spec  # what the run was asked, as a task reads it
    else:  # the conversation opens with the request, as a human message (not a new one)
        goal = HumanMessage(contract.goal, id=f"request:{run_id}:{request.seq}")
        update["messages"] = [goal]
        update["admitted"] = {**request.admitted, "message": goal.id}
    return update


def route_admitted(state: RunState) -> str:
    """Run when a contract is admitted and its run is not over; else end at once (a
    rejected task, a new request on a cancelled thread)."""
    return "run" if state.get("contract") and not _finished(state) else "end"
