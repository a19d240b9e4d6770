"""ReAct: decide ⇄ executor until the verifier accepts a finish or a stop condition fires."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from graph.executor import build_executor
from nodes.admission import admit, route_admitted
from nodes.ask import ask_user
from nodes.decide import decide, route_decision
from nodes.dispatch import dispatch, fan_out
from nodes.observe import observe
from nodes.runtime import RunDeps
from nodes.verify import route_verify, verify
from state.schema import RunState

__all__ = ["build_react"]


def build_react(deps: RunDeps, *, checkpointer: Any = None, name: str = "react") -> Any:
    """Compile the ReAct graph over ``deps``."""
    builder = StateGraph(RunState)
    builder.add_node("admit", partial(admit, deps=deps))
    builder.add_node("decide", partial(decide, deps=deps))
    builder.add_node("dispatch", partial(dispatch, deps=deps))
    builder.add_node("executor", build_executor(deps.executor))
    builder.add_node("observe", observe)
    builder.add_node("ask_user", ask_user)
    builder.add_node("verify", partial(verify, deps=deps))
    builder.add_edge(START, "admit")
    builder.add_conditional_edges("admit", route_admitted, {"run": "decide", "end": END})
    builder.add_conditional_edges("decide", route_decision, ["dispatch", "ask_user", "verify"])
    builder.add_conditional_edges("dispatch", fan_out, ["executor", "observe"])
    builder.add_edge("executor", "observe")
    builder.add_edge("observe", "verify")
    builder.add_edge("ask_user", "decide")
    builder.add_conditional_edges("verify", route_verify, {"continue": "decide", "end": END})
    return builder.compile(checkpointer=checkpointer, name=name)
