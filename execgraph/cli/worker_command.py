"""``execgraph worker``: one Temporal worker advancing execgraph runs until it is stopped.

Start one per core or machine on one task queue; every worker names the same shared
state (``--database postgresql://...``, or one machine's ``--home``) and registers the
same tool sets (``--tools pkg.mod:tools``, repeatable; the demo's unless ``--no-demo``):
a run names one of them, and the worker runs nothing else. It prints one line when it
polls its queue, so a script (or a test) can wait for it, and stops cleanly (exit 0) on
SIGINT or SIGTERM; a run it was advancing is taken up by another worker.
"""

from __future__ import annotations

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
from execgraph.state.errors import CliError

__all__ = ["state_name", "worker"]

WorkerToolsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        help="A tool set runs may name: [NAME=]MODULE:ATTR, a list of tools/adapters (or a "
        "function of the workspace returning one); registered as NAME (default: the "
        "reference itself). Repeatable.",
    ),
]
DemoOpt = Annotated[
    bool, typer.Option("--demo/--no-demo", help="Also serve the demo's tool set ('demo').")
]


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
    tools: WorkerToolsOpt = None,
    demo: DemoOpt = True,
) -> int:
    """Run a Temporal worker for execgraph runs until SIGINT/SIGTERM (exit 0)."""
    from execgraph.cli.reach import demo_graphs
    from execgraph.engines.embedded.records import check_database
    from execgraph.engines.graphs import Graphs
    from execgraph.engines.temporal import serve
    from execgraph.engines.temporal.engine import reachable

    check_database(database)
    base = home_dir(home)
    graphs = demo_graphs(import_refs=False) if demo else Graphs()
    for ref in tools or ():
        graphs.add_ref(ref)  # imported and checked now: a bad one never serves
    if not graphs.names:
        raise CliError("the worker would serve no tool set: give --tools or drop --no-demo")
    reachable(address)
    where = state_name(database, str(base))

    def ready() -> None:
        served = ", ".join(graphs.names)
        line = f"worker ready: task queue {task_queue} on {address} (state: {where})"
        print(f"{line}; tool sets: {served}", flush=True)

    import asyncio  # here, not at the top: `execgraph --help` need not load it

    unreachable = ""
    exit_without_teardown()
    try:
        asyncio.run(
            serve(
                task_queue,
                graphs=graphs,
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
