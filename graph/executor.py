"""The executor pipeline: one node at one durability boundary. Wiring only."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.runnables import Runnable
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import END, START, StateGraph

from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.pipeline import aexecutor_node, executor_node
from execgraph.state.schema import ExecutorInput, ExecutorOutput, ExecutorState

__all__ = ["build_executor", "executor"]


def executor(deps: ExecutorDeps) -> Runnable[Any, dict[str, Any]]:
    """The pipeline as a node for a run graph: each ``Send`` brings a request or a batch.

    A sync and an async body, as ``add_node`` itself would build for a function
    (``RunnableCallable``), but the async one runs calls on the executor's own pool.
    """
    return RunnableCallable(
        partial(executor_node, deps=deps),
        partial(aexecutor_node, deps=deps),
        name="executor",
        trace=False,
    )


def build_executor(deps: ExecutorDeps, *, checkpointer: Any = None, name: str = "executor") -> Any:
    """Compile the pipeline alone (a one-node graph), to drive it without a run around it.

    As a node of a parent graph it inherits the parent's checkpointer (leave
    ``checkpointer`` None); compiled alone, pass one for approvals to pause and resume.
    The run graphs add :func:`executor` directly instead, which saves a nested graph's
    checkpoints per call.
    """
    builder = StateGraph(ExecutorState, input_schema=ExecutorInput, output_schema=ExecutorOutput)
    builder.add_node("executor", executor(deps))
    builder.add_edge(START, "executor")
    builder.add_edge("executor", END)
    return builder.compile(checkpointer=checkpointer, name=name)
