"""The public API, listed from ``execgraph.__all__`` and each name's own docstring.

What is public is what ``execgraph.__all__`` says (a test pins it); what each name is for
is the first line of its docstring. Both are read when the site is built.
"""

from __future__ import annotations

import inspect
import re
import typing

__all__ = ["public_api"]


_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def _alias(obj: object) -> bool:
    return typing.get_origin(obj) is not None


def _summary(obj: object) -> str:
    if _alias(obj) or not (inspect.isclass(obj) or inspect.ismodule(obj) or inspect.isroutine(obj)):
        return f"`{obj!r}`"  # a constant or a type alias: its value says what it is
    doc = inspect.getdoc(obj) or ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    return _ROLE.sub(r"`\1`", text).replace("``", "`").replace("|", "\\|")


def _kind(obj: object) -> str:
    if _alias(obj):
        return "type"
    if inspect.isclass(obj):
        return "class"
    if inspect.ismodule(obj):
        return "module"
    if inspect.isroutine(obj):
        return "function"
    return "constant"


def public_api(module_name: str = "execgraph") -> str:
    """A table of the module's public names: kind, where it is defined, what it is for."""
    import importlib

    module = importlib.import_module(module_name)
    rows = ["| name | kind | what it is |", "|---|---|---|"]
    for name in module.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(module, name)
        rows.append(f"| `{name}` | {_kind(obj)} | {_summary(obj)} |")
    return "\n".join(rows) + "\n"
