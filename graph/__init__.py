"""Compiled LangGraph graphs (wiring only) and the public entry points."""

from graph.executor import build_executor

__all__ = ["build_executor"]
