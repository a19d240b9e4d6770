"""``execgraph worker`` processes for the CLI's Temporal tests, started as a user would.

A worker is the real console script in a subprocess of its own; :func:`cli_worker` waits
for its one ``worker ready:`` line (never a sleep), and on exit sends it SIGTERM and
records how it ended, so a test can assert that it stopped cleanly.
"""

from __future__ import annotations

import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.cli_helpers import GUARD_S, REPO, cli_env, executable

__all__ = ["CliWorker", "cli_worker", "temporal_flags"]


def temporal_flags(address: str, task_queue: str) -> list[str]:
    """The flags that point a command at the worker's runs."""
    return ["--engine", "temporal", "--address", address, "--task-queue", task_queue]


@dataclass
class CliWorker:
    """A running ``execgraph worker``: what it printed when ready, and (after) its end."""

    home: Path
    task_queue: str
    ready: str
    code: int | None = None
    rest: list[str] = field(default_factory=list)


@contextmanager
def cli_worker(address: str, task_queue: str, home: Path, *extra: str) -> Iterator[CliWorker]:
    """Start ``execgraph worker``; yield once it polls ``task_queue``; SIGTERM it on exit."""
    log = open(home.parent / f"worker-{task_queue}.err", "w")  # noqa: SIM115 - closed below
    argv = [*executable(), "worker", "--address", address, "--task-queue", task_queue,
            "--home", str(home), *extra]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=REPO, env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=log, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        line, deadline = "", time.monotonic() + GUARD_S
        while not line.startswith("worker ready:"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"execgraph worker never got ready ({proc.poll()}): "
                    f"{(home.parent / f'worker-{task_queue}.err').read_text()}"
                )
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line = proc.stdout.readline()
        worker = CliWorker(home, task_queue, line.strip())
        yield worker
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
        log.close()
    worker.code = proc.returncode
    worker.rest = rest.splitlines()
