"""``execgraph cancel`` on the embedded engine: log the request, then end a paused run.

Any process may ask: the request is an event in the run's log. A run another process is
driving stops at its next poll; a run started from Python stops when its graph runs
next; a run paused here (or killed) is ended now, its pending calls refused as cancelled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.types import Command
from rich.text import Text

from execgraph.cli.drive import drive, out
from execgraph.cli.options import home_dir, this_run
from execgraph.cli.prompts import automatic_answer
from execgraph.cli.python_runs import PythonRun, continue_in_python
from execgraph.cli.render import STATUS_STYLE, interrupt_summary
from execgraph.cli.run_owner import owner_alive
from execgraph.cli.runs import (
    RunMeta,
    Session,
    build_app,
    checkpoint_status,
    exit_code,
    known_run,
    run_config,
)

__all__ = ["cancel_embedded"]


def cancel_embedded(run_id: str, home: Path | None, database: str | None) -> int:
    """Cancel ``run_id`` of the home (or of ``database``); the exit code of what it did."""
    from execgraph.nodes.cancel import request_cancel
    from execgraph.state.store.sqlite import SqliteExecutionStore

    base = home_dir(home)
    run = known_run(base, run_id)
    this_run(run_id, base)
    reason = "cancelled from the command line"
    graph: Any = None
    if isinstance(run, RunMeta) and (run.database or database):
        graph = build_app(run, base, database=database)  # refuses another database
        request_cancel(graph.run_store, run_id, reason=reason)
        found = graph.get_state(run_config(run_id))
        status, waiting = found.values.get("status"), bool(found.interrupts)
    else:
        with SqliteExecutionStore(base / "exec.db") as store:
            request_cancel(store, run_id, reason=reason)
        status, waiting = checkpoint_status(base, run_id)
    pid = owner_alive(base, run_id)
    if pid is not None:
        out.print(Text(f"cancel requested; process {pid} stops run {run_id} at its next poll"))
        return 0
    if status is not None and status not in ("RUNNING", "WAITING") and not waiting:
        out.print(
            Text(f"run {run_id} already ended: ") + Text(status, STATUS_STYLE.get(status, ""))
        )
        return exit_code(status)
    if isinstance(run, PythonRun):
        out.print(
            Text(
                f"cancel requested; run {run_id} was started from Python, so it stops "
                f"CANCELLED when its graph runs next: {continue_in_python(run_id)}"
            ),
            soft_wrap=True,
        )
        return 0
    out.print(Text(f"cancel requested; ending run {run_id} now", style="bold"))
    session = Session(run, base, graph or build_app(run, base), "reject")
    state = session.graph.get_state(session.config)
    inp: Any = None
    if state.interrupts:
        answers = {}
        for item in state.interrupts:  # worded as what it is: a cancel, not a person's no
            answers[item.id] = automatic_answer(item.value, "reject")
            shown = f"cancelled, not run: {interrupt_summary(item.value)}"
            out.print(Text(shown, style=STATUS_STYLE["CANCELLED"]), soft_wrap=True)
        inp = Command(resume=answers)
    elif not state.values:
        inp = {"task": run.task}
    return drive(session, inp)
