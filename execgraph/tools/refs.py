"""``module:attr`` references to a user's tools, as ``--tools`` and ``EXECGRAPH_TOOLS`` give them.

The CLI and the Studio graphs both take a user's tools by reference. One reading of the
reference, and one check that what it names are tools, so both say the same thing about
the same mistake — as a :class:`~execgraph.state.errors.UsageError` naming the setting and
what is wrong, before anything is built — instead of failing deep inside the registry.
"""

from __future__ import annotations

import importlib
from typing import Any

from execgraph.state.errors import UsageError

__all__ = ["import_ref", "is_tool", "tool_list"]


def import_ref(ref: str, *, source: str) -> Any:
    """The object ``ref`` (``package.module:attr``) names; ``source`` names the setting."""
    module_name, sep, attr = ref.strip().partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{source} {ref!r} must look like 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{source}: cannot import {module_name!r} ({exc})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UsageError(f"{source}: {module_name!r} has no attribute {attr!r}") from None


def is_tool(value: Any) -> bool:
    """A ToolSpec, a LangChain tool or an adapter: what ``build_graph(tools=...)`` takes."""
    from langchain_core.tools import BaseTool

    from execgraph.tools.adapters.base import Adapter
    from execgraph.tools.spec import ToolSpec

    return isinstance(value, ToolSpec | BaseTool | Adapter)


def tool_list(value: Any, *, source: str, ref: str) -> list[Any]:
    """``value`` as a list of tools: one tool, or a non-empty list or tuple of them.

    A list, not any iterable: a single LangChain tool is a pydantic model, which iterates.
    """
    if is_tool(value):
        return [value]
    if not isinstance(value, list | tuple) or not value:
        raise UsageError(
            f"{source} {ref!r} must name a non-empty list of tools (or one tool), not a "
            f"{type(value).__name__}"
        )
    for index, item in enumerate(value):
        if not is_tool(item):
            shown = repr(item) if len(repr(item)) <= 40 else repr(item)[:39] + "…"
            raise UsageError(
                f"{source} {ref!r}: item {index} is a {type(item).__name__} ({shown}), not a "
                "tool; give ToolSpecs (@tool_spec), LangChain tools or adapters"
            )
    return list(value)
