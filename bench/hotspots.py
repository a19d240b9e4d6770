"""Where execgraph's per-step time goes: cProfile over every thread of one run.

``cProfile`` only sees the thread that enables it, and LangGraph runs nodes on worker
threads, so each thread started during the run gets its own profiler (``Thread.run`` is
wrapped for the duration) and the stats are merged. A warm-up run first keeps imports and
first-call caches out of the profile.

``python -m bench.hotspots [--steps 100] [--framework execgraph] [--top 40]``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from bench.workload import EXECGRAPH, run_steps

__all__ = ["profile_run"]


@contextmanager
def _all_threads(profiles: list[cProfile.Profile]) -> Iterator[None]:
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:
        profiler = cProfile.Profile()
        profiles.append(profiler)
        profiler.enable()
        try:
            original(self)
        finally:
            profiler.disable()

    threading.Thread.run = run  # type: ignore[method-assign]
    try:
        yield
    finally:
        threading.Thread.run = original  # type: ignore[method-assign]


def profile_run(framework: str, steps: int) -> tuple[pstats.Stats, float]:
    """Profile one ``steps``-step run; merged stats of all threads and its per-step ms."""
    root = Path(tempfile.mkdtemp(prefix="execgraph-profile-"))
    run_steps(framework, 2, root / "warm")
    profiles: list[cProfile.Profile] = []
    main = cProfile.Profile()
    with _all_threads(profiles):
        main.enable()
        record = run_steps(framework, steps, root / "run")
        main.disable()
    stats = pstats.Stats(main)
    for profiler in profiles:
        # a thread that never ran Python code has no stats to merge
        with suppress(TypeError):
            stats.add(profiler)
    return stats, record.per_step_ms


def report(stats: pstats.Stats, sort: str, top: int, restrict: Any = None) -> str:
    """The top ``top`` rows of ``stats`` sorted by ``sort``, as text."""
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats(sort).print_stats(*(a for a in (restrict, top) if a is not None))
    return out.getvalue()


def main() -> None:
    """Print the top functions by own time and by cumulative time."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--framework", default=EXECGRAPH)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--restrict", default=None, help="regex on file:function")
    opts = parser.parse_args()
    stats, per_step = profile_run(opts.framework, opts.steps)
    print(f"{opts.framework}: {opts.steps} steps, {per_step:.1f} ms/step under the profiler")
    print(report(stats, "tottime", opts.top, opts.restrict))
    print(report(stats, "cumulative", opts.top, opts.restrict))


if __name__ == "__main__":
    main()
