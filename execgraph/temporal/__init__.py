"""execgraph on Temporal: runs as workflows, advanced by workers on any number of machines.

``execgraph worker --task-queue Q`` (or :func:`serve`) runs a worker; :class:`TemporalRuns`
starts, answers, cancels and reads runs; ``execgraph run ... --engine temporal`` does the
same from the command line. Needs the ``temporal`` extra (``temporalio``).
"""

try:
    import temporalio  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    needs = 'execgraph.temporal needs temporalio: pip install "execgraph[temporal]"'
    raise ImportError(needs) from exc

from execgraph.temporal.client import TemporalRuns
from execgraph.temporal.messages import Reached, RunSpec, RunView
from execgraph.temporal.worker import SharedGraphs, make_worker, serve

__all__ = ["Reached", "RunSpec", "RunView", "SharedGraphs", "TemporalRuns", "make_worker", "serve"]
