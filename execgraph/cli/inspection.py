"""The read-only ``execgraph`` commands: ``status``, ``runs``, ``trace`` and ``replay``.

None of them drives a run or calls a model, so they are safe while another process (or a
Temporal worker) owns the run. Each reads through the command's engine, so it works the
same on a home's SQLite files, on ``--database postgresql://...`` and on
``--engine temporal``. :mod:`execgraph.cli.commands` registers them on the app.
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
    EngineOpt,
    HomeOpt,
    NamespaceOpt,
    RunIdArg,
    TaskQueueOpt,
    handled,
)
from execgraph.cli.reach import Target

__all__ = ["COMMANDS", "replay", "runs", "status", "trace"]


@handled
def status(
    run_id: RunIdArg,
    call: Annotated[
        str | None,
        typer.Option(
            "--call",
            help="Show the pending approval of this call in full: every argument, its "
            "hash, reason and expiry.",
        ),
    ] = None,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Show a run's status, pending interrupts and budget (also of a run started from
    Python under the same home); with --call, one pending approval in full."""
    from execgraph.cli.approvals import approval_detail
    from execgraph.cli.drive import out
    from execgraph.cli.render import render_status

    reached = Target(engine, home, database, address, task_queue, namespace).runs()
    if call is not None:
        approval_detail(out, reached.approval(run_id, call))
        return 0
    render_status(out, reached.status(run_id), reached.flags)
    return 0


@handled
def runs(
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """List the runs with their current status (also those started from Python with the
    embedded default store: arch ``? (Python)``)."""
    import time

    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.cli.inert import short
    from execgraph.cli.render import runs_table
    from execgraph.engines.embedded.foreign import PYTHON_ARCH

    reached = Target(engine, home, database, address, task_queue, namespace).runs()
    rows = reached.runs()
    if not rows:
        out.print(Text(f"no runs {short(reached.where, 400)}"))
        return 0

    def created(ts: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"

    out.print(runs_table((r.run_id, r.arch, r.model, created(r.created), r.status) for r in rows))
    if any(row.arch == PYTHON_ARCH for row in rows):
        out.print(
            Text(
                f"{PYTHON_ARCH}: started from Python, not by this CLI; its graph is not "
                "recorded, so status, trace, cancel and reconcile work here, and the graph "
                "that started it continues it",
                style="dim",
            ),
            soft_wrap=True,
        )
    return 0


@handled
def trace(
    run_id: RunIdArg,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Show a run's event timeline from its execution store."""
    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.cli.inert import short
    from execgraph.cli.trace import trace_table

    events = Target(engine, home, database, address, task_queue, namespace).runs().events(run_id)
    if not events:
        out.print(Text(f"run {short(run_id, 200)} has no events yet"))
        return 0
    out.print(trace_table(events))
    return 0


@handled
def replay(
    run_id: RunIdArg,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Re-run a recorded run's control logic: no model call, no side effect; show any diff.

    Exit 0 when the replay reproduces the recording, 4 when it diverges (a changed policy,
    verifier or tool set shows up here).
    """
    from execgraph.cli.drive import out
    from execgraph.cli.render import replay_table

    report = Target(engine, home, database, address, task_queue, namespace).runs().replay(run_id)
    out.print(replay_table(report))
    return 0 if report.same else 4


COMMANDS = (status, runs, trace, replay)
"""In the order ``execgraph --help`` lists them."""
