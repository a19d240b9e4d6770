"""Worker processes for the Temporal benchmark.

Each worker is a real OS process (:mod:`bench.temporal_worker`). They start together and
the pool yields only once every one has printed its ready line, so their startup (Python,
imports, the warm-up run, the first poll) is never timed. They are stopped (SIGTERM, then
SIGKILL) when the block ends, however it ends.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.temporal_worker import READY
from bench.temporal_workload import Workload

__all__ = ["worker_processes"]

_READY_TIMEOUT_S = 300.0  # four Pythons importing LangGraph and Temporal on two busy cores
_STOP_TIMEOUT_S = 15.0
_ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def worker_processes(
    count: int,
    *,
    address: str,
    task_queue: str,
    dsn: str,
    directory: Path,
    workload: Workload,
    max_concurrent: int,
    connect_timeout_s: float = 30.0,
) -> Iterator[list[subprocess.Popen[str]]]:
    """Start ``count`` workers on ``task_queue``; yield them once all are ready (a worker
    waits up to ``connect_timeout_s`` for the database)."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    procs: list[subprocess.Popen[str]] = []
    logs: list[Path] = []
    try:
        for index in range(count):
            log = directory / f"worker-{index}.log"
            logs.append(log)
            with open(log, "w") as stderr:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "bench.temporal_worker", address, task_queue,
                         dsn, str(directory / "home"), "--steps", str(workload.steps),
                         "--sleep", str(workload.sleep_s),
                         "--max-concurrent", str(max_concurrent),
                         "--connect-timeout", str(connect_timeout_s)],
                        cwd=_ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True,
                    )
                )  # fmt: skip
        deadline = time.monotonic() + _READY_TIMEOUT_S
        for proc, log in zip(procs, logs, strict=True):
            _wait_ready(proc, log, deadline)
        yield procs
    finally:
        _stop(procs)


def _wait_ready(proc: subprocess.Popen[str], log: Path, deadline: float) -> None:
    assert proc.stdout is not None
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
        if not ready:
            raise TimeoutError(f"a bench worker was not ready in {_READY_TIMEOUT_S:.0f} s")
        line = proc.stdout.readline()
        if not line:
            detail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"a bench worker exited ({proc.wait()}) before ready:\n{detail}")
        if line.strip() == READY:
            return


def _stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    for proc in procs:
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
