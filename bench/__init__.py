"""Benchmarks of execgraph's ReAct graph against plain LangGraph, on one scripted workload.

Run ``python -m bench`` (``--quick`` for a smoke run, ``--only NAME`` for one measurement,
``--json PATH`` to keep the figures). Measurements, one module each: ``steps`` (cost per
tool step), ``growth``, ``size`` (SQLite bytes), ``parallel`` (fan-out), ``resume`` (new
process), ``memory`` (tracemalloc peak), ``floor`` (two bare SQLite commits per step),
``concurrency`` (20 threads on one store) and ``temporal`` (throughput with 1, 2 and 4
worker processes on Temporal and PostgreSQL; the Temporal mode's cost per step) and
``middleware`` (a ``create_agent`` tool step with ``ExecutorMiddleware`` against without). The
harness only measures; it changes nothing in the runtime. A full run takes about 25
minutes on 2 cores (the 1,000-step runs under tracemalloc are most of it); ``--quick``
about 2. ``python -m bench.hotspots`` profiles one
run over all threads, to see where a step's time goes.
"""

from bench.core import Bench, Row, Target

__all__ = ["MEASUREMENTS", "Bench", "Row", "Target"]

MEASUREMENTS = (
    "steps",
    "growth",
    "size",
    "resume",
    "parallel",
    "memory",
    "floor",
    "concurrency",
    "temporal",
    "middleware",
)
"""Measurement names, in the order they run (the long runs are shared by the first four)."""
