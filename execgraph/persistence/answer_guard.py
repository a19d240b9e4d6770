"""The executor compiled alone answers only a resume that carries an answer.

:func:`execgraph.graph.executor.build_executor` compiles the pipeline as a one-node graph;
it needs no thread id (it may run without a checkpointer), but a resume without an answer
is refused as it is in a run graph (:func:`execgraph.nodes.executor.require_answer`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from execgraph.nodes.executor import require_answer
from execgraph.persistence.thread_bound import attrs_of
from execgraph.state.compiled import ExecutorGraph
from execgraph.state.schema import ExecutorInput, ExecutorOutput, ExecutorState

__all__ = ["AnswerGuardedExecutor", "answer_guarded"]


class AnswerGuardedExecutor(CompiledStateGraph[ExecutorState, None, ExecutorInput, ExecutorOutput]):
    """The executor compiled alone: no thread id needed (it may run without a
    checkpointer), but a resume must carry an answer, as in a run graph."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """LangGraph's ``stream`` (and so ``invoke``), once a resume carries an answer."""
        require_answer(input)
        return super().stream(input, config, **kwargs)

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream`` (and so ``ainvoke``), once a resume carries an answer."""
        require_answer(input)
        return super().astream(input, config, **kwargs)


def answer_guarded(graph: ExecutorGraph) -> ExecutorGraph:
    """``graph`` as an :class:`AnswerGuardedExecutor`."""
    return AnswerGuardedExecutor(**attrs_of(graph))
