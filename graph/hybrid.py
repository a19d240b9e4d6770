"""Hybrid: fixed phases (scope → collect → analyze → publish → accept), ReAct inside collect."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from execgraph.graph.compiled import RunGraph
from execgraph.graph.executor import executor
from execgraph.nodes.admission import admit, route_admitted
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import dispatch, fan_out
from execgraph.nodes.observe import observe
from execgraph.nodes.phases import (
    PHASE_INSTRUCTIONS,
    approve_publish,
    phase_tools,
    reopen,
    route_phase,
    route_phase_decision,
    scope,
)
from execgraph.nodes.verify import route_verify, verify
from execgraph.state.schema import RunInput, RunState

__all__ = ["build_hybrid"]


def build_hybrid(deps: RunDeps, *, checkpointer: Any = None, name: str = "hybrid") -> RunGraph:
    """Compile the hybrid graph over ``deps``."""
    builder = StateGraph(RunState, input_schema=RunInput)
    builder.add_node("admit", partial(admit, deps=deps))
    builder.add_node("scope", scope)
    phases = {"collect": "read", "analyze": "write", "publish": "irreversible"}
    exits = {
        "collect": ["dispatch", "analyze", "verify_finish"],
        "analyze": ["dispatch", "publish", "verify_finish"],
        "publish": ["approve", "accept", "verify_finish"],
    }
    for phase, effect in phases.items():
        step = partial(
            decide,
            deps=deps,
            tools=phase_tools(deps, effect),
            phase=phase,
            controls=("finish", "abort"),
            instruction=PHASE_INSTRUCTIONS[phase],
        )
        builder.add_node(phase, step)
        builder.add_conditional_edges(phase, route_phase_decision, exits[phase])
    builder.add_node("approve", partial(approve_publish, deps=deps))
    builder.add_node("dispatch", partial(dispatch, deps=deps))
    builder.add_node("executor", executor(deps.executor))
    builder.add_node("observe", observe)
    # The verifier twice: as the stop controller after each tool turn, and on the result
    # the accept phase states.
    builder.add_node("check_stop", partial(verify, deps=deps))
    builder.add_node(
        "accept",
        partial(
            decide,
            deps=deps,
            tools=(),
            controls=("finish",),
            instruction=PHASE_INSTRUCTIONS["accept"],
        ),
    )
    builder.add_node("verify_finish", partial(verify, deps=deps))
    builder.add_node("reopen", reopen)
    builder.add_edge(START, "admit")
    builder.add_conditional_edges("admit", route_admitted, {"run": "scope", "end": END})
    builder.add_edge("scope", "collect")
    builder.add_conditional_edges("dispatch", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_conditional_edges("approve", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_edge("executor", "observe")
    builder.add_edge("observe", "check_stop")
    builder.add_conditional_edges(
        "check_stop",
        route_phase,
        {"collect": "collect", "analyze": "analyze", "accept": "accept", "end": END},
    )
    builder.add_edge("accept", "verify_finish")
    builder.add_conditional_edges("verify_finish", route_verify, {"continue": "reopen", "end": END})
    builder.add_edge("reopen", "collect")
    return builder.compile(checkpointer=checkpointer, name=name)
