"""The read-only ``execgraph`` commands: ``status``, ``runs``, ``trace`` and ``replay``.

None of them drives a run or calls a model, so they are safe while another process owns
the run. :mod:`execgraph.cli` registers them on the app, after the commands that act.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from execgraph.cli.drive import out
from execgraph.cli.hints import home_flag
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
    home_dir,
)
from execgraph.cli.python_runs import (
    PYTHON_ARCH,
    PythonRun,
    PythonState,
    continue_in_python,
    python_state,
)
from execgraph.cli.render import render_status, replay_table, runs_table
from execgraph.cli.run_owner import owner_alive
from execgraph.cli.runs import (
    build_app,
    known_run,
    load_meta,
    replay_recorded,
    run_config,
    run_rows,
)
from execgraph.cli.temporal_connection import engine_target
from execgraph.cli.temporal_runs import show_status
from execgraph.cli.trace import trace_table
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = ["COMMANDS", "replay", "runs", "status", "trace"]


@handled
def status(
    run_id: RunIdArg,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Show a run's status, pending interrupts and budget (also of a run started from
    Python under the same home; with --engine temporal, the workflow's own view)."""
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        return show_status(where, run_id)
    base = home_dir(home)
    run = known_run(base, run_id)
    if isinstance(run, PythonRun):
        state: Any = python_state(base, run_id)
        elsewhere: str | None = continue_in_python(run_id)
        if not state.values and run.finished:
            state = PythonState({"status": run.finished})  # ran without a checkpointer
    else:
        graph = build_app(run, base, read_only=True, database=database)
        state = graph.get_state(run_config(run_id))
        elsewhere = None
    pid = owner_alive(base, run_id)
    render_status(out, run, state, pid, home_flag(base), elsewhere=elsewhere)
    return 0


@handled
def runs(home: HomeOpt = None) -> int:
    """List the runs under --home with their current status (also those started from
    Python with the embedded default store: arch ``? (Python)``)."""
    base = home_dir(home)
    rows = run_rows(base)
    if not rows:
        out.print(Text(f"no runs under {base}"))
        return 0
    out.print(runs_table(rows))
    if any(row[1] == PYTHON_ARCH for row in rows):
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
def trace(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Show a run's event timeline from the execution store."""
    base = home_dir(home)
    known_run(base, run_id)
    with SqliteExecutionStore(base / "exec.db") as store:
        events = store.events(run_id)
    if not events:
        out.print(Text(f"run {run_id} has no events yet"))
        return 0
    out.print(trace_table(events))
    return 0


@handled
def replay(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Re-run a recorded run's control logic: no model call, no side effect; show any diff.

    Exit 0 when the replay reproduces the recording, 4 when it diverges (a changed policy,
    verifier or tool set shows up here).
    """
    base = home_dir(home)
    meta = load_meta(base, run_id)
    with SqliteExecutionStore(base / "exec.db") as store:
        report = replay_recorded(meta, base, store)
    out.print(replay_table(report))
    return 0 if report.same else 4


COMMANDS = (status, runs, trace, replay)
"""In the order ``execgraph --help`` lists them."""
