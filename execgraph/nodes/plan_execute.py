"""Plan-and-execute: a plan is a DAG of tool steps; ready steps run in parallel.

The planner (one model call, bounded repairs) submits steps with dependencies and an
optional success criterion (an evidence kind the step must produce). Step status is never
stored twice: it is read from the step's result. The plan is replaced only by a newer
version, and only on a trigger. Steps already done, their facts and their side-effect
records carry over to the new version: a replan never treats past execution as if it
never happened (seed 002 §10.3).

A trigger fires once per cause. Each new plan records the causes open when it was made
(``answered``): it was made knowing them, so only a cause that appears later (a new
conflict, a new step's gap) replans again, and the new plan's own evidence is what the
verifier then judges. The triggers, checked after every wave:

* *dependency failed*: a step's call failed; the new plan drops it.
* *environment changed*: the world moved under the plan. Either a step observed a source
  at an older ``version`` and value than a later observation (not our own write) brought
  into evidence — the done steps that saw the old state and touched nothing are dropped and
  re-planned — or a step's result reports that its target changed (a
  ``StateGuardMismatch``).
* *evidence gap*: a done step did not produce the evidence kind its criterion names.
* *contrary evidence*: two observations of one source at one version disagree (the
  evidence reducer flags them).
* *budget deviation*: the plan's steps spent far more tool calls than it planned; spending
  is counted from the moment this version was made, not over the whole run.
* *goal changed*: the user updated the run's ``task`` between waves (LangGraph
  ``update_state`` while the run is paused, e.g. under ``interrupt_before``). The task is
  admitted again — a task admission refuses fails the run — and its contract replaces the
  old one; the plan made for the old goal is replaced, done steps and committed side
  effects stay on record. The user asked for it, so the replan limit never refuses it
  (it still counts as a replan).

The verifier rejecting the answer, or the model asking for a new plan, replans too (up to
``max_replans``, like every trigger but a goal change).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from execgraph.nodes.admission import build_contract, run_id_of
from execgraph.nodes.budget import remaining, used
from execgraph.nodes.context.projection import observation_text, project
from execgraph.nodes.conversation import ai_message, answer, unanswered
from execgraph.nodes.decide import CONTROL_SCHEMAS, model_failure, unusable_reply
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import queue_calls
from execgraph.nodes.executor import schema_message
from execgraph.nodes.model.call import call_model, recorded_replies, unstorable
from execgraph.nodes.verify import is_terminal, stop_update
from execgraph.state.contracts import BudgetKind, Decision, DecisionKind, RunStatus, TaskContract
from execgraph.state.errors import AdmissionError
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState
from execgraph.state.updates import merge

__all__ = [
    "NO_TOOLS_PLAN_SCHEMA",
    "PLAN_SCHEMA",
    "PlanStep",
    "assess",
    "parse_plan",
    "plan",
    "rejected",
    "respond_instruction",
    "route_assess",
    "route_respond",
    "schedule",
    "step_status",
]


class PlanStep(BaseModel):
    """One step of a plan."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=40)
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    success: str | None = None


class _Submitted(BaseModel):
    model_config = ConfigDict(extra="ignore")

    steps: list[PlanStep] = Field(min_length=1)


PLAN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Submit the plan: tool steps with dependencies (a DAG). Steps whose "
        "dependencies are done run in parallel.",
        "parameters": _Submitted.model_json_schema(),
    },
}


NO_TOOLS_PLAN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Tools are off for this run: submit an empty plan (no steps); the "
        "answer step follows, where you answer from what you know.",
        "parameters": {
            "type": "object",
            "properties": {"steps": {"type": "array", "maxItems": 0, "items": {}}},
            "required": ["steps"],
        },
    },
}
"""``submit_plan`` as offered with tools off (``RunDeps.tools_enabled``): no step may be
planned, since every step is a tool call."""


def parse_plan(
    ai: AIMessage, done: set[str], *, tools_enabled: bool = True
) -> tuple[list[PlanStep] | None, str | None]:
    """Steps from a ``submit_plan`` call, checked to form a DAG over known step ids.

    With ``tools_enabled`` False only the empty plan is accepted: a step naming a tool is
    refused as not offered, for the model to repair.
    """
    if ai.invalid_tool_calls:
        return None, "the submit_plan arguments were not valid JSON"
    calls = [c for c in ai.tool_calls if c["name"] == "submit_plan"]
    if len(calls) != 1:
        return None, "call submit_plan exactly once"
    if unstorable(calls[0]["args"]):
        return None, "argument numbers must fit in 64 bits"
    if not tools_enabled:
        return _no_tools_plan(calls[0]["args"])
    try:
        steps = _Submitted.model_validate(calls[0]["args"]).steps
    except ValidationError as exc:
        return None, f"the plan is malformed: {schema_message(exc)}"
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids) or set(ids) & done:
        return None, "step ids must be unique and must not reuse finished steps' ids"
    known = set(ids) | done
    for step in steps:
        if missing := set(step.depends_on) - known:
            return None, f"step {step.id} depends on unknown steps {sorted(missing)}"
    order: list[str] = []
    pending = {s.id: set(s.depends_on) - done for s in steps}
    while pending:
        ready = [i for i, deps in pending.items() if not deps]
        if not ready:
            return None, "the plan has a dependency cycle"
        for i in ready:
            order.append(i)
            del pending[i]
        for deps in pending.values():
            deps.difference_update(ready)
    return steps, None


def _no_tools_plan(args: Mapping[str, Any]) -> tuple[list[PlanStep] | None, str | None]:
    steps = args.get("steps")
    if steps == []:
        return [], None
    if not isinstance(steps, list):
        return None, "the plan is malformed: steps must be a list (empty: tools are off)"
    first = steps[0] if isinstance(steps[0], Mapping) else {}
    named = f"step {first.get('id')!r} names the tool {first.get('tool')!r}, which"
    return None, (
        f"{named if first else 'every step names a tool, and a tool'} is not offered: tools "
        "are off for this run; call submit_plan with no steps and answer from what you know"
    )


def step_status(step: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """``pending``, ``done`` or ``failed``, read from the step's result."""
    result = results.get(step["call_id"])
    if result is None:
        return "pending"
    return "done" if result.get("outcome") == "succeeded" else "failed"


def _tool_catalog(contract: TaskContract, deps: RunDeps) -> str:
    if not deps.tools_enabled:
        return "none: tools are off for this run; submit_plan with no steps."
    lines = []
    for spec in deps.executor.registry.latest():
        if spec.name in contract.allowed_actions:
            params = json.dumps(spec.input_model.model_json_schema().get("properties", {}))
            lines.append(f"- {spec.name} ({spec.effect}): {spec.description} params={params}")
    return "\n".join(lines)


def plan(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Make the first plan, or a new version that keeps finished steps.

    A done step whose observation is out of date (its source changed since) is not kept:
    the new plan may observe it again. A step that touched the world is always kept.
    """
    contract = TaskContract.model_validate(state["contract"])
    run_id = run_id_of(config)
    old = state.get("plan") or {"version": 0, "steps": [], "replans": -1}
    results = state.get("results") or {}
    stale = _stale_steps(state)
    kept = [s for s in old["steps"] if step_status(s, results) == "done" and s["id"] not in stale]
    done = {s["id"] for s in kept}
    turn = int(state.get("turn", 0)) + 1
    turn_id = f"t{turn}"
    trigger = state.get("trigger")
    answered = list(old.get("answered", []))
    causes = [(k, m) for k, m in _causes(state) if k not in answered]
    instruction = "Plan the task as tool steps. Available tools:\n" + _tool_catalog(contract, deps)
    if trigger:
        summary = ", ".join(sorted(done)) or "none"
        instruction += f"\n\nReplanning because: {trigger}. Finished steps kept: {summary}."
        also = [m for _, m in causes if m != trigger]
        if also:
            instruction += "\nAlso open: " + "; ".join(also) + "."
    if stale:
        instruction += (
            "\n\nObservations now out of date (plan them again if still needed):\n"
            + "\n".join(f"- step {i}: {_seen(*what)}" for i, what in stale.items())
        )
    seen = [
        f"step {s['id']}: {observation_text(results[s['call_id']], deps.observation_limit)}"
        for s in kept
    ]
    if seen:
        instruction += "\n\nResults of finished steps:\n" + "\n".join(seen)
    left = remaining(contract, state, BudgetKind.MODEL_CALLS)
    result = call_model(
        deps.model.bind_tools(
            [PLAN_SCHEMA if deps.tools_enabled else NO_TOOLS_PLAN_SCHEMA, CONTROL_SCHEMAS["abort"]]
        ),
        project(state, contract, deps, instruction),
        lambda ai: _parse_or_abort(ai, done, contract.max_argument_bytes, deps.tools_enabled),
        max_repairs=deps.max_repairs,
        left=left,
        run_id=run_id,
        turn_id=turn_id,
        config=config,
        recorded=recorded_replies(deps.executor.store, run_id, turn_id),
    )
    update: dict[str, Any] = {"turn": turn, "budget": result.charge(f"{turn_id}:plan")}
    if result.problem is not None or result.parsed is None:
        return merge([update, model_failure(result, left, run_id, turn_id, deps)])
    deps.executor.store.append_events(result.events)
    update["events"] = {"recent": [e.event_id for e in result.events]}
    if result.parsed == "abort":
        stop = stop_update(state, contract, deps, RunStatus.FAILED, "the planner aborted")
        return merge([update, stop])  # the planner's events and the stop's both counted
    version = int(old["version"]) + 1
    added = [{**s.model_dump(), "call_id": f"p{version}.{s.id}"} for s in result.parsed]
    new_plan = {
        "version": version,
        "steps": kept + added,
        "replans": int(old.get("replans", -1)) + 1,
        "why": trigger,
        "answered": answered + [k for k, _ in causes],
        "planned_tool_calls": len(added),
        "tool_calls_before": used(state).get(BudgetKind.TOOL_CALLS.value, 0),
    }
    # The conversation: the planner's reply, its submit_plan call answered by the plan made.
    steps = ", ".join(f"{s['id']} ({s['tool']})" for s in kept + added) or "none"
    accepted = f"plan version {version} accepted; steps: {steps}"
    conversation = [
        *unanswered(state, deps.observation_chars),
        ai_message(result.ai, run_id, turn_id),
        *(answer(str(c["id"]), accepted) for c in result.ai.tool_calls if c.get("id")),
    ]
    return {
        **update,
        "plan": new_plan,
        "phase": "execute",
        "trigger": None,
        "messages": conversation,
    }


def _parse_or_abort(
    ai: AIMessage, done: set[str], max_argument_bytes: int, tools_enabled: bool = True
) -> tuple[Any, str | None]:
    # What no call may carry (a lone surrogate, arguments that are not an object or too
    # large) no plan may either: it would sit in the checkpoint until the executor refused it.
    problem = unusable_reply(ai, max_argument_bytes)
    if problem is not None:
        return None, problem
    if any(c["name"] == "abort" for c in ai.tool_calls):
        return "abort", None
    return parse_plan(ai, done, tools_enabled=tools_enabled)


def schedule(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Queue every ready step (all dependencies done) as one parallel batch."""
    results = state.get("results") or {}
    current = state.get("plan") or {"version": 0, "steps": []}
    steps = current["steps"]
    status = {s["id"]: step_status(s, results) for s in steps}
    ready = [
        s
        for s in steps
        if status[s["id"]] == "pending" and all(status.get(d) == "done" for d in s["depends_on"])
    ]
    version = current["version"]
    calls = [
        Decision(
            decision_id=f"{s['call_id']}.d",
            kind=DecisionKind.TOOL_CALL,
            tool_name=s["tool"],
            arguments=s["arguments"],
            call_id=s["call_id"],
        )
        for s in ready
    ]
    if not calls:  # an empty plan (tools off): nothing to run, on to the answer
        return {"pending": []}
    charge_id = f"p{version}:" + "+".join(s["id"] for s in ready)
    steps = {s["call_id"]: s["id"] for s in ready}
    # With tools off no step may run, whatever the plan says: the executor refuses it.
    allowed: list[str] | None = None if deps.tools_enabled else []
    return queue_calls(state, deps, calls, f"p{version}", charge_id, steps=steps, allowed=allowed)


def _touched(result: Mapping[str, Any]) -> bool:
    """True when a call committed a side effect, or nobody can tell that it did not."""
    return (result.get("side_effect") or {}).get("committed", False) is not False


def _changed_by_others(results: Mapping[str, Any], source: str, version: int) -> bool:
    """True when ``source`` at ``version`` was observed, and by no call of ours that wrote."""
    makers = [
        r
        for r in results.values()
        if any(
            e.get("source_id") == source and e.get("version", 1) == version
            for e in r.get("evidence") or []
        )
    ]
    return bool(makers) and not any(_touched(r) for r in makers)


def _stale_steps(state: Mapping[str, Any]) -> dict[str, tuple[str, int, int]]:
    """Done steps that observed a source the world has since changed:
    step id -> (source, version seen, version now).

    Changed means a newer version with another value: many tools stamp every observation
    with the time, so a newer version alone is a re-read, not a change. A step's arguments
    are fixed when the plan is made, so what it depends on is what it observed. A step
    that touched the world is never stale: its effect stays on record.
    """
    results = state.get("results") or {}
    evidence = state.get("evidence") or {}
    stale: dict[str, tuple[str, int, int]] = {}
    for step in (state.get("plan") or {}).get("steps", []):
        result = results.get(step["call_id"])
        if step_status(step, results) != "done" or result is None or _touched(result):
            continue
        for item in result.get("evidence") or []:
            source = str(item.get("source_id"))
            current = evidence.get(source)
            if current is None:
                continue
            old, new = int(item.get("version", 1)), int(current.get("version", 1))
            moved = new > old and current.get("value") != item.get("value")
            if moved and _changed_by_others(results, source, new):
                stale[step["id"]] = (source, old, new)
                break
    return stale


def _seen(source: str, old: int, new: int) -> str:
    return f"saw {source[:80]} at version {old}, now at version {new}"


def _causes(state: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every replan cause the state shows now, as (key, message), most urgent first.

    The key names the cause itself (a call, a source at a version, a plan version), so
    a plan can record which causes it answered.
    """
    results = state.get("results") or {}
    current = state.get("plan") or {"version": 0, "steps": []}
    steps = current["steps"]
    out: list[tuple[str, str]] = []
    for step in steps:
        if step_status(step, results) == "failed":
            error = results[step["call_id"]].get("error") or {}
            text = f"step {step['id']} ({step['tool']}) {error.get('message', '')}".strip()
            if error.get("type") == "StateGuardMismatch":
                out.append((f"failed:{step['call_id']}", f"environment changed: {text}"))
            else:
                out.append((f"failed:{step['call_id']}", f"dependency failed: {text}"))
    for step_id, (source, old, new) in _stale_steps(state).items():
        message = f"environment changed: step {step_id} {_seen(source, old, new)}"
        out.append((f"changed:{source}@{new}", message))
    evidence = state.get("evidence") or {}
    for step in steps:
        if step.get("success") and step_status(step, results) == "done":
            kinds = {e.get("kind") for e in results[step["call_id"]].get("evidence", [])}
            if step["success"] not in kinds and not any(
                e.get("kind") == step["success"] for e in evidence.values()
            ):
                message = f"evidence gap: step {step['id']} produced no {step['success']} evidence"
                out.append((f"gap:{step['call_id']}:{step['success']}", message))
    for source, item in evidence.items():
        if item.get("conflict"):
            values = sorted({str(v) for v in [item.get("value"), *item.get("conflicts", [])]})
            digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]
            key = f"conflict:{source}@{item.get('version', 1)}:{digest}"  # values may be long
            message = (
                f"contrary evidence: {len(values)} observations of {source[:80]} "
                f"at version {item.get('version', 1)} disagree"
            )
            out.append((key, message))
    planned = int(current.get("planned_tool_calls", len(steps)))
    spent = used(state).get(BudgetKind.TOOL_CALLS.value, 0) - current.get("tool_calls_before", 0)
    if spent > max(planned * 1.5, planned + 2):
        message = f"budget deviation: {spent:g} tool calls against {planned} planned"
        out.append((f"budget:v{current['version']}", message))
    return out


def _trigger(state: Mapping[str, Any]) -> str | None:
    """The first cause no plan has answered yet, or None."""
    answered = set((state.get("plan") or {}).get("answered", []))
    return next((m for k, m in _causes(state) if k not in answered), None)


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
    changed = [f for f in TaskContract.model_fields if getattr(revised, f) != getattr(contract, f)]
    return (revised, changed) if changed else None


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
        return _goal_changed(contract, *revision, deps)
    current = dict(state.get("plan") or {"steps": []})
    trigger = _trigger(state)
    if trigger:
        return _replan(state, contract, deps, trigger)
    results = state.get("results") or {}
    pending = [s for s in current["steps"] if step_status(s, results) == "pending"]
    return {"phase": "execute" if pending else "respond"}


def _goal_changed(
    old: TaskContract, revised: TaskContract, changed: list[str], deps: RunDeps
) -> dict[str, Any]:
    """Adopt the revised contract (logged as an admission) and replan for it."""
    payload = {"goal": revised.goal, "revised": changed}
    digest = hashlib.sha256(revised.model_dump_json().encode()).hexdigest()[:16]
    event = make_event(EventType.RUN_ADMITTED, old.run_id, seq=digest, payload=payload)
    deps.executor.store.append_events([event])
    what = "goal" if "goal" in changed else "task"
    return {
        "contract": revised.model_dump(mode="json"),
        "trigger": f"goal changed: the user updated the {what} ({', '.join(changed)})",
        "phase": "replan",
        "events": {"recent": [event.event_id]},
    }


def _replan(
    state: Mapping[str, Any], contract: TaskContract, deps: RunDeps, trigger: str
) -> dict[str, Any]:
    if int((state.get("plan") or {}).get("replans", 0)) >= deps.max_replans:
        reason = f"replan limit reached; last trigger: {trigger}"
        return stop_update(state, contract, deps, RunStatus.FAILED, reason)
    return {"trigger": trigger, "phase": "replan"}


def rejected(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """The verifier rejected the answer (an evidence gap) or the model asked to replan."""
    contract = TaskContract.model_validate(state["contract"])
    asked = [d["content"] for d in state.get("decisions") or [] if d["kind"] == "revise_plan"]
    if asked:
        return _replan(state, contract, deps, f"the model asked for a new plan: {asked[0]}")
    failed = (state.get("verification") or {}).get("failed") or ["the result was not accepted"]
    return _replan(state, contract, deps, "evidence gap: " + "; ".join(failed))


def route_assess(state: Mapping[str, Any]) -> str:
    """schedule | plan | respond | end."""
    if is_terminal(state):
        return "end"
    return {"execute": "schedule", "replan": "plan"}.get(str(state.get("phase")), "respond")


def respond_instruction(state: Mapping[str, Any], deps: RunDeps) -> str:
    """The answer step's instruction: every step's observation, bounded."""
    results = state.get("results") or {}
    lines = []
    for step in (state.get("plan") or {}).get("steps", []):
        result = results.get(step["call_id"])
        if result is not None:
            lines.append(f"step {step['id']}: {observation_text(result, deps.observation_limit)}")
    return (
        "All plan steps are done. Their observations:\n"
        + "\n".join(lines)
        + ("\nGive the final output with finish, or ask for a new plan with revise_plan.")
    )


def route_respond(state: Mapping[str, Any]) -> str:
    """A revise_plan decision is a replan trigger; anything else goes to the verifier
    (``verify_finish``)."""
    if is_terminal(state):
        return "verify_finish"
    kinds = {d["kind"] for d in state.get("decisions") or []}
    return "rejected" if DecisionKind.REVISE_PLAN.value in kinds else "verify_finish"
