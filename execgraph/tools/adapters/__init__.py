"""Adapters: bridges from validated tool calls to the world.

Each adapter is imported when it is first named (PEP 562), so importing one adapter — or
``execgraph`` — does not load the others or their drivers: Playwright, psycopg and the
HTTP client stay unloaded until a tool needs them. Process and HTTP adapters need only
the core install; ``DatabaseAdapter`` imports psycopg only for PostgreSQL URLs and
``BrowserAdapter`` needs the ``browser`` extra.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from execgraph.tools.adapters.base import Adapter
    from execgraph.tools.adapters.browser import BrowserAdapter
    from execgraph.tools.adapters.database import DatabaseAdapter
    from execgraph.tools.adapters.fake import FakeAdapter
    from execgraph.tools.adapters.files import FileAdapter
    from execgraph.tools.adapters.http import HttpAdapter
    from execgraph.tools.adapters.process import (
        ProcessAdapter,
        ProcessExitError,
        ProcessLeftoverError,
    )

__all__ = [
    "Adapter",
    "BrowserAdapter",
    "DatabaseAdapter",
    "FakeAdapter",
    "FileAdapter",
    "HttpAdapter",
    "ProcessAdapter",
    "ProcessExitError",
    "ProcessLeftoverError",
]

_WHERE = {
    "Adapter": "base",
    "BrowserAdapter": "browser",
    "DatabaseAdapter": "database",
    "FakeAdapter": "fake",
    "FileAdapter": "files",
    "HttpAdapter": "http",
    "ProcessAdapter": "process",
    "ProcessExitError": "process",
    "ProcessLeftoverError": "process",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
