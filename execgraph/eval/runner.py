"""Run the suite x architectures x ablations x seeds, in parallel processes.

:func:`evaluate` runs every cell of an :class:`~execgraph.eval.config.EvalConfig` (one
run each, :mod:`execgraph.eval.cells`) in a process pool and reduces them to estimates
over the seeds (:mod:`execgraph.eval.reduction`). Results are kept in cell order whatever
order the workers finish in, so the same config gives the same report; only its
``timing`` (wall clock) differs. The names an evaluation is driven by are importable
from here.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

from execgraph.eval.cells import MAX_RESUMES, Cell, CellResult, run_cell
from execgraph.eval.config import EvalConfig, quick_config, select_tasks
from execgraph.eval.reduction import TIMING_METRICS, EvalReport, reduce

__all__ = [
    "MAX_RESUMES",
    "TIMING_METRICS",
    "Cell",
    "CellResult",
    "EvalConfig",
    "EvalReport",
    "Progress",
    "evaluate",
    "quick_config",
    "run_cell",
    "select_tasks",
]

Progress = Callable[[int, int, CellResult], None]
"""``progress(done, total, result)``, called as each cell finishes (in finishing order)."""


def evaluate(config: EvalConfig, *, progress: Progress | None = None) -> EvalReport:
    """Run every cell of ``config`` (in ``config.workers`` processes) and reduce them.

    Results are in cell order whatever order the workers finish in. A worker that dies
    (the pool breaks) turns the cells it could not run into error cells. Workers are
    spawned, so a script calling this with ``workers > 1`` needs multiprocessing's
    ``if __name__ == "__main__":`` guard (the CLI and notebooks need nothing).
    """
    cells = config.cells()
    total = len(cells)
    workers = max(1, min(config.workers or os.cpu_count() or 1, total or 1))
    started = time.perf_counter()
    results: list[CellResult | None] = [None] * total
    done = 0

    def record(i: int, result: CellResult) -> None:
        nonlocal done
        results[i] = result
        done += 1
        if progress is not None:
            progress(done, total, result)

    if workers == 1:
        for i, cell in enumerate(cells):
            record(i, run_cell(cell))
    else:
        # spawn: a worker starts clean (no copied locks or threads of the caller, e.g. a
        # progress bar's refresh thread); it pays one import, once.
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        try:
            futures = {pool.submit(run_cell, cell): i for i, cell in enumerate(cells)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    result = future.result()
                except Exception as exc:  # the worker died (BrokenProcessPool, ...)
                    result = CellResult(cells[i], None, type(exc).__name__, str(exc)[:500])
                record(i, result)
        except BaseException:  # Ctrl-C: drop the queued cells instead of running them all
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    report = EvalReport(config=config, results=[r for r in results if r is not None])
    reduce(report)
    report.timing.update(
        {"wall_s": round(time.perf_counter() - started, 3), "workers": workers, "cells": total}
    )
    return report
