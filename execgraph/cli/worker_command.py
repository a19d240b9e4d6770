"""``execgraph worker``: one Temporal worker advancing execgraph runs until it is stopped.

Start one per core or machine on one task queue; every worker names the same shared
state (``--database postgresql://...``, or one machine's ``--home``). It prints one line
when it polls its queue, so a script (or a test) can wait for it, and stops cleanly
(exit 0) on SIGINT or SIGTERM; a run it was advancing is taken up by another worker.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from execgraph.cli.options import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    AddressOpt,
    DatabaseOpt,
    HomeOpt,
    NamespaceOpt,
    TaskQueueOpt,
    exit_without_teardown,
    handled,
    home_dir,
)
from execgraph.cli.runs import CliError, check_database
from execgraph.cli.temporal_connection import reachable

__all__ = ["state_name", "worker"]


def state_name(database: str | None, home: str) -> str:
    """Where the worker's runs are kept, as printed: never a DSN's password."""
    if database is None:
        return f"home {home}"
    from execgraph.state.store.postgres import database_name

    return f"postgresql {database_name(database)}; workspaces under {home}"


@handled
def worker(
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    address: AddressOpt = DEFAULT_ADDRESS,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
    database: DatabaseOpt = None,
    home: HomeOpt = None,
    max_concurrent: Annotated[
        int, typer.Option("--max-concurrent", min=1, help="Advances run at once by this worker.")
    ] = 16,
) -> int:
    """Run a Temporal worker for execgraph runs until SIGINT/SIGTERM (exit 0)."""
    from execgraph.temporal import serve

    check_database(database)
    base = home_dir(home)
    reachable(address)
    where = state_name(database, str(base))

    def ready() -> None:
        line = f"worker ready: task queue {task_queue} on {address} (state: {where})"
        print(line, flush=True)

    unreachable = ""
    exit_without_teardown()
    try:
        asyncio.run(
            serve(
                task_queue,
                address=address,
                namespace=namespace,
                database=database,
                home=base,
                max_concurrent=max_concurrent,
                ready=ready,
            )
        )
    except RuntimeError as exc:  # the SDK's "Failed client connect" / "Worker validation"
        if "client connect" not in str(exc) and "Worker validation failed" not in str(exc):
            raise
        unreachable = str(exc).split(": Status {")[0]  # the gRPC status repeats it in bytes
    if unreachable:  # raised out here: no traceback keeps the failed client alive
        raise CliError(f"the worker cannot serve on Temporal at {address}: {unreachable}")
    print(f"worker stopped: task queue {task_queue}", flush=True)
    return 0
