"""One benchmark worker process: ``python -m bench.temporal_worker ADDRESS QUEUE DSN HOME``.

It opens the shared PostgreSQL database, runs one untimed warm-up run of the workload in
process (imports, connection pools and first-call caches are paid before the clock
starts), connects to Temporal, starts polling ``QUEUE`` with at most ``--max-concurrent``
advances at once and only then prints ``ready``. It runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import warnings
from pathlib import Path

from temporalio.client import Client

from bench.temporal_workload import Workload, WorkloadGraphs, run_spec
from execgraph.engines.temporal.worker import make_worker

__all__ = ["READY", "main"]

READY = "ready"
"""The line a worker prints once it polls its task queue."""


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.temporal_worker")
    parser.add_argument("address")
    parser.add_argument("task_queue")
    parser.add_argument("dsn")
    parser.add_argument("home", type=Path)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--max-concurrent", type=int, default=4)
    parser.add_argument("--connect-timeout", type=float, default=30.0)
    return parser.parse_args(argv)


async def _serve(opts: argparse.Namespace) -> None:
    workload = Workload(steps=opts.steps, sleep_s=opts.sleep)
    graphs = WorkloadGraphs(opts.dsn, opts.home, workload, connect_timeout_s=opts.connect_timeout)
    try:
        warm = await asyncio.to_thread(
            graphs.run_embedded, run_spec(f"warm-{os.getpid()}", workload)
        )
        if warm.get("status") != "COMPLETED":
            raise SystemExit(f"warm-up run ended {warm.get('status')}: {warm.get('error')}")
        client = await Client.connect(opts.address)
        worker = make_worker(client, opts.task_queue, graphs, max_concurrent=opts.max_concurrent)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with worker:
            print(READY, flush=True)
            await stop.wait()
    finally:
        graphs.close()


def main(argv: list[str] | None = None) -> int:
    """Serve until told to stop."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    asyncio.run(_serve(_parse(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
