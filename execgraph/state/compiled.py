"""The types of what the builders return: compiled LangGraph graphs over execgraph's state."""

from __future__ import annotations

from typing import TypeAlias

from langgraph.graph.state import CompiledStateGraph

from execgraph.state.schema import (
    ExecutorInput,
    ExecutorOutput,
    ExecutorState,
    RunInput,
    RunState,
)

__all__ = ["ExecutorGraph", "RunGraph"]

RunGraph: TypeAlias = CompiledStateGraph[RunState, None, RunInput, RunState]
"""A run under one of the four architectures: ``invoke({"task": ...}, config)``."""

ExecutorGraph: TypeAlias = CompiledStateGraph[ExecutorState, None, ExecutorInput, ExecutorOutput]
"""The executor pipeline compiled alone: ``invoke({"request": ...}, config)``."""
