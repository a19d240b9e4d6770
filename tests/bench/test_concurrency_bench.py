"""The concurrency rows run every thread's run to the end, and the model-bound one waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.concurrency import THREADS, run_concurrent
from bench.core import Bench

pytestmark = pytest.mark.system  # a smoke run of the benchmark: 40 runs on 20 threads


@pytest.mark.parametrize("framework", ["execgraph", "create_agent"])
def test_every_thread_completes_and_a_slow_model_bounds_the_run(
    tmp_path: Path, framework: str
) -> None:
    bench = Bench(quick=True, root=tmp_path, log=lambda _: None)
    latency = 0.05
    result = run_concurrent(bench, framework, 2, model_latency_s=latency)
    assert result["completed"] == THREADS and result["errors"] == 0
    assert result["elapsed_s"] >= 3 * latency  # each run waits for its three model calls
