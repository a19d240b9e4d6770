"""execgraph on Temporal: runs as workflows, advanced by workers on any number of machines.

``execgraph worker --task-queue Q --tools pkg.mod:tools`` (or :func:`serve`) runs a
worker serving the tool sets its operator registered; :class:`TemporalRuns` starts,
answers, cancels and reads runs (async), :class:`TemporalEngine` is the same as the
:class:`~execgraph.engines.runs.Runs` every engine implements; ``execgraph run ...
--engine temporal`` does the same from the command line. Needs the ``temporal`` extra
(``temporalio``).
"""

try:
    import temporalio  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    needs = 'execgraph.engines.temporal needs temporalio: pip install "execgraph[temporal]"'
    raise ImportError(needs) from exc

from execgraph.engines.temporal.client import TemporalRuns
from execgraph.engines.temporal.engine import TemporalEngine
from execgraph.engines.temporal.messages import Reached, RunSpec, RunView
from execgraph.engines.temporal.worker import SharedGraphs, make_worker, serve

__all__ = [
    "Reached",
    "RunSpec",
    "RunView",
    "SharedGraphs",
    "TemporalEngine",
    "TemporalRuns",
    "make_worker",
    "serve",
]
