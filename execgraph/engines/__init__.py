"""Engines: the one way to reach a run, wherever it runs.

:class:`~execgraph.engines.runs.Runs` (start, answer, resume, cancel, status, events,
trace, replay, reconcile, runs) is implemented by the embedded engine
(:class:`~execgraph.engines.embedded.EmbeddedRuns`: this process, a home's SQLite files
or PostgreSQL) and by Temporal (:class:`~execgraph.engines.temporal.TemporalEngine`:
workers on any number of machines). Both build a run's graph from the names in its
:class:`~execgraph.engines.spec.RunSpec`, through the tool sets and models registered in
:class:`~execgraph.engines.graphs.Graphs`, and both advance it with the one
:func:`~execgraph.engines.advance.advance`.

Names load on first use, so reading a spec costs no LangGraph import.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from execgraph.engines.advance import Step, advance
    from execgraph.engines.embedded.runs import EmbeddedRuns
    from execgraph.engines.graphs import Graphs, ToolSet
    from execgraph.engines.runs import Answerer, RunRow, Runs
    from execgraph.engines.spec import RunSpec, RunView

__all__ = [
    "Answerer",
    "EmbeddedRuns",
    "Graphs",
    "RunRow",
    "RunSpec",
    "RunView",
    "Runs",
    "Step",
    "ToolSet",
    "advance",
]

_WHERE = {
    "Answerer": "execgraph.engines.runs",
    "EmbeddedRuns": "execgraph.engines.embedded.runs",
    "Graphs": "execgraph.engines.graphs",
    "RunRow": "execgraph.engines.runs",
    "RunSpec": "execgraph.engines.spec",
    "RunView": "execgraph.engines.spec",
    "Runs": "execgraph.engines.runs",
    "Step": "execgraph.engines.advance",
    "ToolSet": "execgraph.engines.graphs",
    "advance": "execgraph.engines.advance",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'execgraph.engines' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
