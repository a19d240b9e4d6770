"""The executor pipeline: one node at one durability boundary. Wiring only."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph

from execgraph.nodes.executor import ExecutorDeps, aexecutor_node, executor_node
from execgraph.persistence.answer_guard import answer_guarded
from execgraph.state.compiled import ExecutorGraph
from execgraph.state.schema import ExecutorInput, ExecutorOutput, ExecutorState

__all__ = ["ExecutorNode", "build_executor", "executor"]


class ExecutorNode(Runnable[Any, Any]):
    """The pipeline as a node: a sync body, and an async one that runs calls on the
    executor's own pool (see :func:`execgraph.nodes.executor.node.aexecutor_node`).

    A plain ``Runnable``: LangGraph already runs a node inside its task's config context
    (so ``interrupt()`` and the stream writer find the run) and traces the task, where
    ``RunnableLambda(func, afunc=...)`` would open a callback run of its own per call
    (about 0.3 ms, on the executor's hot path).
    """

    name = "executor"

    def __init__(self, deps: ExecutorDeps) -> None:
        self.deps = deps

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run one request (or a batch) through every stage."""
        return executor_node(input, deps=self.deps)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """The same under ``ainvoke``, off the event loop."""
        return await aexecutor_node(input, deps=self.deps)


def executor(deps: ExecutorDeps) -> ExecutorNode:
    """The pipeline as a node for a run graph: each ``Send`` brings a request or a batch."""
    return ExecutorNode(deps)


def build_executor(
    deps: ExecutorDeps, *, checkpointer: Any = None, name: str = "executor"
) -> ExecutorGraph:
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
    return answer_guarded(builder.compile(checkpointer=checkpointer, name=name))
