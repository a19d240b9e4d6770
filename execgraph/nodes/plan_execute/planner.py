"""The ``plan`` node: the planner's one model call, and the plan version it makes.

The planner (one model call, bounded repairs) submits steps with dependencies and an
optional success criterion (an evidence kind the step must produce). A new version keeps
the steps already done, their facts and their side-effect records; it is told why it was
asked (the trigger, and any other cause still open), which observations went out of date
and what the finished steps observed, so it plans only what is left.

A model that does not plan still drives it (:mod:`.direct`): its direct tool calls are
the plan, its plain answer goes to the verifier.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from execgraph.nodes.admission import run_id_of
from execgraph.nodes.answer_format import AnswerFormat
from execgraph.nodes.budget import remaining, used
from execgraph.nodes.context.projection import observation_text, project
from execgraph.nodes.conversation import ai_message, answer, unanswered
from execgraph.nodes.decide import CONTROL_SCHEMAS, model_failure, parse_reply, unusable_reply
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.model.call import call_model, recorded_replies
from execgraph.nodes.model.redaction import reply_redaction
from execgraph.nodes.plan_execute.direct import DIRECT, direct_steps
from execgraph.nodes.plan_execute.steps import (
    NO_TOOLS_PLAN_SCHEMA,
    PLAN_SCHEMA,
    parse_plan,
    step_status,
)
from execgraph.nodes.plan_execute.triggers import causes, stale_steps, staleness
from execgraph.nodes.verify import is_terminal, stop_update
from execgraph.state.contracts import BudgetKind, Decision, DecisionKind, RunStatus, TaskContract
from execgraph.state.schema import RunState
from execgraph.state.updates import fold, merge

__all__ = ["plan", "route_planned"]


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
    stale = stale_steps(state)
    kept = [s for s in old["steps"] if step_status(s, results) == "done" and s["id"] not in stale]
    done = {s["id"] for s in kept}
    turn = int(state.get("turn", 0)) + 1
    turn_id = f"t{turn}"
    trigger = state.get("trigger")
    answered = list(old.get("answered", []))
    open_causes = [(k, m) for k, m in causes(state) if k not in answered]
    instruction = "Plan the task as tool steps. Available tools:\n" + _tool_catalog(contract, deps)
    if trigger:
        summary = ", ".join(sorted(done)) or "none"
        instruction += f"\n\nReplanning because: {trigger}. Finished steps kept: {summary}."
        also = [m for _, m in open_causes if m != trigger]
        if also:
            instruction += "\nAlso open: " + "; ".join(also) + "."
    if stale:
        instruction += (
            "\n\nObservations now out of date (plan them again if still needed):\n"
            + "\n".join(f"- step {i}: {staleness(old, new)}" for i, (_, old, new) in stale.items())
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
        lambda ai: _parse_or_abort(
            ai, done, contract.max_argument_bytes, deps.tools_enabled, turn_id, deps.answer_format
        ),
        max_repairs=deps.max_repairs,
        left=left,
        run_id=run_id,
        turn_id=turn_id,
        config=config,
        recorded=recorded_replies(deps.executor.store, run_id, turn_id),
        redact=reply_redaction(deps.executor.registry, run_id, turn_id, plan_tool="submit_plan"),
    )
    update: dict[str, Any] = {"turn": turn, "budget": result.charge(f"{turn_id}:plan")}
    if result.problem is not None or result.parsed is None:
        return merge([update, model_failure(result, left, run_id, turn_id, deps, state)])
    deps.executor.store.append_events(result.events)
    update["events"] = {"recent": [e.event_id for e in result.events]}
    earlier = [*unanswered(state, deps.observation_chars), ai_message(result.ai, run_id, turn_id)]
    if result.parsed == "abort":  # the stop answers the planner's abort call
        said = {"messages": earlier}
        given = next(
            str(c["args"].get("reason", "")) for c in result.ai.tool_calls if c["name"] == "abort"
        )
        reason = f"the planner aborted: {given}" if given else "the planner aborted"
        stop = stop_update(fold(state, said), contract, deps, RunStatus.FAILED, reason)
        return merge([update, said, stop])  # the planner's events and the stop's both counted
    if isinstance(result.parsed, Decision):  # a plain answer: the verifier judges it
        answer_update = {"decisions": [result.parsed.model_dump(mode="json")]}
        return {**update, **answer_update, "messages": earlier}
    version = int(old["version"]) + 1
    why: str | None
    if isinstance(result.parsed, tuple):  # direct tool calls: they are the plan
        added, why = direct_steps(result.parsed, version), trigger or DIRECT
    else:
        added = [{**s.model_dump(), "call_id": f"p{version}.{s.id}"} for s in result.parsed]
        why = trigger
    new_plan = {
        "version": version,
        "steps": kept + added,
        "replans": int(old.get("replans", -1)) + 1,
        "why": why,
        "answered": answered + [k for k, _ in open_causes],
        "planned_tool_calls": len(added),
        "tool_calls_before": used(state).get(BudgetKind.TOOL_CALLS.value, 0),
    }
    # The conversation: the planner's reply, its submit_plan call answered by the plan made
    # (direct calls are answered by their results).
    steps = ", ".join(f"{s['id']} ({s['tool']})" for s in kept + added) or "none"
    accepted = f"plan version {version} accepted; steps: {steps}"
    planned = [c for c in result.ai.tool_calls if c.get("id") and c["name"] == "submit_plan"]
    conversation = [*earlier, *(answer(str(c["id"]), accepted, c["name"]) for c in planned)]
    return {
        **update,
        "plan": new_plan,
        "phase": "execute",
        "trigger": None,
        "decisions": [],
        "messages": conversation,
    }


def _parse_or_abort(
    ai: AIMessage,
    done: set[str],
    max_argument_bytes: int,
    tools_enabled: bool = True,
    turn_id: str = "t0",
    answer: AnswerFormat | None = None,
) -> tuple[Any, str | None]:
    """The planner's reply read: ``"abort"``, a plan's steps, direct tool calls (a tuple
    of decisions), or a plain answer (one decision; none where the run's answer has a
    structure, which only ``finish`` gives), or a problem to repair."""
    # What no call may carry (a lone surrogate, arguments that are not an object or too
    # large) no plan may either: it would sit in the checkpoint until the executor refused it.
    problem = unusable_reply(ai, max_argument_bytes)
    if problem is not None:
        return None, problem
    names = {c["name"] for c in ai.tool_calls}
    if "abort" in names:
        return "abort", None
    direct = names and not names & {"submit_plan", *CONTROL_SCHEMAS} and tools_enabled
    if not names or direct:
        decisions, problem = parse_reply(ai, turn_id, max_argument_bytes, answer)
        if problem is None and len(decisions) == 1 and decisions[0].kind is DecisionKind.ANSWER:
            return decisions[0], None
        if problem is None and direct:
            return tuple(decisions), None
    return parse_plan(ai, done, tools_enabled=tools_enabled)


def route_planned(state: RunState) -> str:
    """After the planner: END once stopped; a plain answer to the verifier
    (``verify_finish``); else the plan's first wave (``schedule``)."""
    if is_terminal(state):
        return "end"
    kinds = {d["kind"] for d in state.get("decisions") or []}
    return "verify_finish" if DecisionKind.ANSWER.value in kinds else "schedule"
