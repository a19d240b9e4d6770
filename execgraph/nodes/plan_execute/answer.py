"""The ``respond`` node: once every step is done, the model answers from their observations.

The answer step offers no tools: the model gives the final output with ``finish`` (the
verifier judges it next, in ``verify_finish``), asks for a new plan with
``revise_plan`` (a replan trigger, handled by ``rejected``), or aborts. A model that calls
tools here instead (an ordinary tool-calling model) has its calls run as the plan's next
wave (:mod:`.direct`), and is asked again once they are done.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.context.projection import observation_text
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import ACTIONS, tool_calls
from execgraph.nodes.plan_execute.direct import extended_plan
from execgraph.nodes.verify import is_terminal
from execgraph.state.contracts import DecisionKind
from execgraph.state.schema import RunState

__all__ = ["RESPOND_CONTROLS", "respond", "respond_instruction", "route_respond"]

RESPOND_CONTROLS = ("finish", "revise_plan", "abort")
"""The control tools the answer step offers (and no other tool)."""


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


def respond(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """One model call offered only :data:`RESPOND_CONTROLS`, shown every step's observation;
    tool calls in its reply extend the plan (:mod:`.direct`)."""
    update = decide(
        state,
        config,
        deps=deps,
        tools=(),
        controls=RESPOND_CONTROLS,
        instruction=respond_instruction,
    )
    calls = tool_calls(update)  # type: ignore[arg-type]
    if calls and not is_terminal(update):
        update = {**update, "plan": extended_plan(state, calls), "phase": "execute"}
    return update


def route_respond(state: Mapping[str, Any]) -> str:
    """A revise_plan decision is a replan trigger; tool calls run as the plan's next wave
    (``schedule``); anything else goes to the verifier (``verify_finish``)."""
    if is_terminal(state):
        return "verify_finish"
    kinds = {d["kind"] for d in state.get("decisions") or []}
    if DecisionKind.REVISE_PLAN.value in kinds:
        return "rejected"
    return "schedule" if kinds & set(ACTIONS) else "verify_finish"
