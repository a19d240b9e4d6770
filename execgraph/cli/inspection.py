"""The read-only ``execgraph`` commands: ``status``, ``runs``, ``trace`` and ``replay``.

None of them drives a run or calls a model, so they are safe while another process owns
the run. :mod:`execgraph.cli` registers them on the app, after the commands that act.
"""

from __future__ import annotations

from rich.text import Text

from execgraph.cli.drive import out, suffix
from execgraph.cli.options import HomeOpt, RunIdArg, handled, home_dir
from execgraph.cli.render import render_status, replay_table, runs_table
from execgraph.cli.runs import (
    build_app,
    load_meta,
    owner_alive,
    replay_recorded,
    run_config,
    run_rows,
)
from execgraph.cli.trace import trace_table
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = ["COMMANDS", "replay", "runs", "status", "trace"]


@handled
def status(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Show a run's status, pending interrupts and budget."""
    base = home_dir(home)
    meta = load_meta(base, run_id)
    graph = build_app(meta, base, read_only=True)
    state = graph.get_state(run_config(run_id))
    render_status(out, meta, state, owner_alive(base, run_id), suffix(base))
    return 0


@handled
def runs(home: HomeOpt = None) -> int:
    """List the runs under --home with their current status."""
    base = home_dir(home)
    rows = run_rows(base)
    if not rows:
        out.print(Text(f"no runs under {base}"))
        return 0
    out.print(runs_table(rows))
    return 0


@handled
def trace(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Show a run's event timeline from the execution store."""
    base = home_dir(home)
    load_meta(base, run_id)
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
