"""The executor pipeline subgraph: authorize → [approval] → execute. Wiring only."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from nodes.executor.pipeline import (
    approval_node,
    authorize_node,
    execute_node,
    route_after_approval,
    route_after_authorize,
)
from nodes.executor.results import ExecutorDeps
from state.schema import ExecutorInput, ExecutorOutput, ExecutorState

__all__ = ["build_executor"]


def build_executor(deps: ExecutorDeps, *, checkpointer: Any = None, name: str = "executor") -> Any:
    """Compile the executor subgraph over ``deps``.

    As a node of a parent graph it inherits the parent's checkpointer (leave
    ``checkpointer`` None); compiled alone, pass one for approvals to pause and resume.
    """
    builder = StateGraph(ExecutorState, input_schema=ExecutorInput, output_schema=ExecutorOutput)
    builder.add_node("authorize", partial(authorize_node, deps=deps))
    builder.add_node("approval", partial(approval_node, deps=deps))
    builder.add_node("execute", partial(execute_node, deps=deps))
    builder.add_edge(START, "authorize")
    builder.add_conditional_edges("authorize", route_after_authorize, ["approval", "execute"])
    builder.add_conditional_edges("approval", route_after_approval, ["authorize", "execute"])
    builder.add_edge("execute", END)
    return builder.compile(checkpointer=checkpointer, name=name)
