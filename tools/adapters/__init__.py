"""Adapters: bridges from validated tool calls to the world."""

from tools.adapters.base import DEFAULT_OUTPUT_BUDGET, Adapter, AdapterOutput, InvokeContext

__all__ = ["DEFAULT_OUTPUT_BUDGET", "Adapter", "AdapterOutput", "InvokeContext"]
