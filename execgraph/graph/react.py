"""ReAct: turn after turn until the verifier accepts a finish or a stop condition fires.

A step is one superstep: ``decide`` (``nodes/react.py``: observe the last results, call the
model, run the calls no rule could pause). A call that may pause for approval runs in
``executor`` (one ``Send`` each, see ``execgraph.nodes.batching``), then the next turn.
``verify`` runs only for a finish, an abort or a stop condition.
"""

from __future__ import annotations

from functools import partial
from typing import Unpack

from langgraph.graph import END, START

from execgraph.graph.compiling import CompileOptions, compile_run, run_builder
from execgraph.graph.executor import executor
from execgraph.nodes.admission import admit, route_admitted
from execgraph.nodes.ask import ask_user
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.react import TURN_DESTINATIONS, react_turn
from execgraph.nodes.verify import route_verify, verify
from execgraph.state.compiled import RunGraph

__all__ = ["build_react"]


def build_react(deps: RunDeps, **options: Unpack[CompileOptions]) -> RunGraph:
    """Compile the ReAct graph over ``deps``."""
    builder = run_builder(options)
    builder.add_node("admit", partial(admit, deps=deps))
    builder.add_node("decide", partial(react_turn, deps=deps), destinations=TURN_DESTINATIONS)
    builder.add_node("executor", executor(deps.executor))
    builder.add_node("ask_user", partial(ask_user, deps=deps))
    builder.add_node("verify", partial(verify, deps=deps))
    builder.add_edge(START, "admit")
    builder.add_conditional_edges("admit", route_admitted, {"run": "decide", "end": END})
    builder.add_edge("executor", "decide")
    builder.add_edge("ask_user", "decide")
    builder.add_conditional_edges("verify", route_verify, {"continue": "decide", "end": END})
    return compile_run(builder, options, "react")
