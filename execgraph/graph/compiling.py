"""What every architecture's graph is compiled with, in one place.

The four builders differ in their nodes and edges only; the LangGraph options a caller
gives (a checkpointer, LangGraph's store, the run context's schema, a name) reach each of
them the same way, through :class:`CompileOptions`, so an option added here is an option
of all four.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import StateGraph
from langgraph.store.base import BaseStore

from execgraph.state.compiled import RunGraph
from execgraph.state.schema import RunInput, RunState

__all__ = ["CompileOptions", "compile_run", "run_builder"]


class CompileOptions(TypedDict, total=False):
    """LangGraph's compile options for a run graph (each optional)."""

    checkpointer: Any
    """A checkpoint saver; None or absent: none."""
    store: BaseStore | None
    """LangGraph's store, for the tools' long-term memory."""
    name: str
    """The graph's name (default: the architecture's)."""
    context_schema: type[Any] | None
    """The type of ``invoke(..., context=...)``; a dict given for it becomes one."""


def run_builder(options: CompileOptions) -> StateGraph[RunState, Any, RunInput, RunState]:
    """An empty graph over the run state, with the options' context schema."""
    return StateGraph(RunState, context_schema=options.get("context_schema"), input_schema=RunInput)


def compile_run(
    builder: StateGraph[RunState, Any, RunInput, RunState], options: CompileOptions, name: str
) -> RunGraph:
    """``builder`` compiled with the options (``name`` unless they name it)."""
    return builder.compile(
        checkpointer=options.get("checkpointer"),
        store=options.get("store"),
        name=options.get("name") or name,
    )
