"""The ``assess`` and ``rejected`` nodes: whether the plan stands after a wave or an answer.

After each wave ``assess`` decides: replan on a trigger (:mod:`.triggers`), run the next
wave, or move on to the answer. Two more causes replan, decided here because they are
not read from the plan's results:

* *goal changed*: the user updated the run's ``task`` between waves (LangGraph
  ``update_state`` while the run is paused, e.g. under ``interrupt_before``). The task is
  admitted again — a task admission refuses fails the run — and its contract replaces the
  old one; the plan made for the old goal is replaced, done steps and committed side
  effects stay on record. The user asked for it, so the replan limit never refuses it
  (it still counts as a replan).
* the verifier rejecting the answer, or the model asking for a new plan (``rejected``).

Every replan but a goal change counts against ``max_replans``; past it the run fails.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.admission import build_contract
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.least_privilege import FROZEN_FIELDS, freeze_capabilities
from execgraph.nodes.plan_execute.steps import step_status
from execgraph.nodes.plan_execute.triggers import open_trigger
from execgraph.nodes.verify import is_terminal, stop_update
from execgraph.state.contracts import RunStatus, TaskContract
from execgraph.state.errors import AdmissionError
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState

__all__ = ["assess", "rejected", "route_assess"]


def assess(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """After a wave: replan on a trigger, run the next wave, or move on to the answer."""
    if is_terminal(state):
        return {}
    contract = TaskContract.model_validate(state["contract"])
    try:
        revision = _revised_contract(state, contract, deps)
    except AdmissionError as exc:
        reason = f"the updated task was not admitted: {exc.message}"
        return stop_update(state, contract, deps, RunStatus.FAILED, reason)
    if revision is not None:
        return _goal_changed(contract, *revision, deps, config)
    current = dict(state.get("plan") or {"steps": []})
    trigger = open_trigger(state)
    if trigger:
        return _replan(state, contract, deps, trigger)
    results = state.get("results") or {}
    pending = [s for s in current["steps"] if step_status(s, results) == "pending"]
    return {"phase": "execute" if pending else "respond"}


def rejected(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """The verifier rejected the answer (an evidence gap) or the model asked to replan."""
    contract = TaskContract.model_validate(state["contract"])
    asked = [d for d in state.get("decisions") or [] if d["kind"] == "revise_plan"]
    if asked:
        trigger = f"the model asked for a new plan: {asked[0]['content']}"
        turn = int(state.get("turn", 0))
        note = {"id": f"t{turn}:revise", "turn": turn, "tool_call_id": asked[0]["tool_call_id"]}
        return {**_replan(state, contract, deps, trigger), "feedback": [{**note, "text": trigger}]}
    failed = (state.get("verification") or {}).get("failed") or ["the result was not accepted"]
    return _replan(state, contract, deps, "evidence gap: " + "; ".join(failed))


def route_assess(state: Mapping[str, Any]) -> str:
    """schedule | plan | respond | end."""
    if is_terminal(state):
        return "end"
    return {"execute": "schedule", "replan": "plan"}.get(str(state.get("phase")), "respond")


def _revised_contract(
    state: Mapping[str, Any], contract: TaskContract, deps: RunDeps
) -> tuple[TaskContract, list[str]] | None:
    """The contract of the run's task when the user changed the task since admission.

    The task is admitted again as of the run's start (so a deadline keeps its origin);
    the fields that differ name the change. None when the task is what was admitted.

    Raises:
        AdmissionError: the updated task is refused.
    """
    task, started = state.get("task"), state.get("started_at")
    if not task or started is None:
        return None
    revised = build_contract(task, deps, contract.run_id, float(started))
    revised = revised.model_copy(update={"workspace": contract.workspace})
    # under a least-privilege contract the plan set these: they differ, the task did not
    planned = FROZEN_FIELDS if deps.contract == "least_privilege" else ()
    changed = [
        f
        for f in TaskContract.model_fields
        if f not in planned and getattr(revised, f) != getattr(contract, f)
    ]
    return (revised, changed) if changed else None


def _goal_changed(
    old: TaskContract,
    revised: TaskContract,
    changed: list[str],
    deps: RunDeps,
    config: RunnableConfig,
) -> dict[str, Any]:
    """Adopt the revised contract (logged as an admission) and replan for it; under a
    least-privilege contract its capabilities are planned again, from the new request."""
    payload: dict[str, Any] = {"goal": revised.goal, "revised": changed}
    digest = hashlib.sha256(revised.model_dump_json().encode()).hexdigest()[:16]
    planned: dict[str, Any] = {}
    if deps.contract == "least_privilege":
        revised, planned = freeze_capabilities(revised, deps, config, digest)
        payload["capabilities"] = planned["capabilities"]
    event = make_event(EventType.RUN_ADMITTED, old.run_id, seq=digest, payload=payload)
    deps.executor.store.append_events([event])
    what = "goal" if "goal" in changed else "task"
    update: dict[str, Any] = {
        "contract": revised.model_dump(mode="json"),
        "trigger": f"goal changed: the user updated the {what} ({', '.join(changed)})",
        "phase": "replan",
        "events": {"recent": [*planned.get("events", {}).get("recent", []), event.event_id]},
    }
    if planned:
        update["budget"] = planned["budget"]
    return update


def _replan(
    state: Mapping[str, Any], contract: TaskContract, deps: RunDeps, trigger: str
) -> dict[str, Any]:
    if int((state.get("plan") or {}).get("replans", 0)) >= deps.max_replans:
        reason = f"replan limit reached; last trigger: {trigger}"
        return stop_update(state, contract, deps, RunStatus.FAILED, reason)
    return {"trigger": trigger, "phase": "replan"}
