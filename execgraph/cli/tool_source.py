"""``--tools MODULE:ATTR``: the user's tools, checked to be tools before anything runs.

The attribute may be a tool or an adapter, a non-empty list of them, or a factory
``(workspace) -> list``. Anything else — a list of strings, a class, a factory of the
wrong arity — is bad input (exit 2) with a line naming what is wrong, never an internal
error from deep inside the graph builder.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

from execgraph.state.errors import CliError

__all__ = ["load_tools", "tool_source"]


def tool_source(spec: str) -> Any:
    """Import ``module:attr`` and check it names tools: a tool or adapter, a non-empty list
    of them, or a factory ``(workspace) -> list``; anything else is bad input (exit 2).

    The working directory is importable, so ``--tools mytools:TOOLS`` finds ``./mytools.py``.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"--tools {spec!r} must look like 'package.module:attribute'")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a user's own module, as `python -m` would
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"--tools: cannot import {module_name!r} ({exc})") from None
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise CliError(f"--tools: {module_name!r} has no attribute {attr!r}") from None
    if inspect.isfunction(value):
        try:
            inspect.signature(value).bind(Path.cwd())
        except TypeError:
            raise CliError(
                f"--tools {spec!r}: a factory must take one argument, the workspace"
            ) from None
        return value
    if _is_tool(value):
        return [value]
    if not isinstance(value, list | tuple) or not value:
        raise CliError(
            f"--tools {spec!r} must name a non-empty list of tools, or a function "
            "(workspace) -> list of tools"
        )
    return _tools_only(spec, list(value))


def _is_tool(value: Any) -> bool:
    from langchain_core.tools import BaseTool

    from execgraph.tools.adapters.base import Adapter
    from execgraph.tools.spec import ToolSpec

    return isinstance(value, ToolSpec | BaseTool | Adapter)


def _tools_only(spec: str, items: list[Any]) -> list[Any]:
    """``items`` if every one is a tool; else bad input naming the first that is not."""
    for index, item in enumerate(items):
        if not _is_tool(item):
            shown = repr(item) if len(repr(item)) <= 40 else repr(item)[:39] + "…"
            raise CliError(
                f"--tools {spec!r}: item {index} is a {type(item).__name__} ({shown}), not a "
                "tool; give ToolSpecs (@tool_spec), LangChain tools or adapters"
            )
    return items


def load_tools(spec: str, workspace: Path) -> list[Any]:
    """The tools ``module:attr`` names: tools/adapters, or a factory's list of them."""
    value = tool_source(spec)
    if inspect.isfunction(value):
        value = value(workspace)
        if _is_tool(value):
            value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise CliError(f"--tools {spec!r}: the factory must return a non-empty list of tools")
    return _tools_only(spec, list(value))
