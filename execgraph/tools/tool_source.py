"""``--tools MODULE:ATTR``: the user's tools, checked to be tools before anything runs.

The attribute may be a tool or an adapter, a non-empty list of them, or a factory
``(workspace) -> list``. Anything else — a list of strings, a class, a factory of the
wrong arity — is bad input (exit 2) with a line naming what is wrong, never an internal
error from deep inside the graph builder (:mod:`execgraph.tools.refs` reads and checks the
reference, as it does for Studio's ``EXECGRAPH_TOOLS``).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

from execgraph.state.errors import CliError
from execgraph.tools.refs import import_ref, tool_list

__all__ = ["load_tools", "tool_source"]

_SOURCE = "--tools"


def tool_source(spec: str) -> Any:
    """Import ``module:attr`` and check it names tools: a tool or adapter, a non-empty list
    of them, or a factory ``(workspace) -> list``; anything else is bad input (exit 2).

    The working directory is importable, so ``--tools mytools:TOOLS`` finds ``./mytools.py``.
    """
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a user's own module, as `python -m` would
    value = import_ref(spec, source=_SOURCE)
    if inspect.isfunction(value):
        try:
            inspect.signature(value).bind(Path.cwd())
        except TypeError:
            raise CliError(
                f"--tools {spec!r}: a factory must take one argument, the workspace"
            ) from None
        return value
    return tool_list(value, source=_SOURCE, ref=spec)


def load_tools(spec: str, workspace: Path) -> list[Any]:
    """The tools ``module:attr`` names: tools/adapters, or a factory's list of them."""
    value = tool_source(spec)
    if inspect.isfunction(value):
        value = value(workspace)
    return tool_list(value, source=f"{_SOURCE} factory", ref=spec)
