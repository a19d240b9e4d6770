"""Adapters: bridges from validated tool calls to the world."""

from tools.adapters.base import DEFAULT_OUTPUT_BUDGET, Adapter, AdapterOutput, InvokeContext
from tools.adapters.fake import FakeAdapter
from tools.adapters.files import FileAdapter

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "Adapter",
    "AdapterOutput",
    "FakeAdapter",
    "FileAdapter",
    "InvokeContext",
]
