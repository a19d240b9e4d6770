"""The ``execgraph`` command line: run, pause, approve, resume, cancel and inspect runs.

Wiring and presentation only: run metadata and graph rebuilding live in
:mod:`graph.cli_runs`, rich output in :mod:`graph.cli_render`. A run's id is its LangGraph
``thread_id``, so any later process (``approve``, ``resume``, ``cancel``) continues the
same checkpointed run.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from langgraph.types import Command
from rich.console import Console
from rich.text import Text

from graph.build import ARCHITECTURES, default_home
from graph.cli_drive import answers_for, drive, out, report, suffix
from graph.cli_prompts import (
    answer_questions,
    select_approvals,
)
from graph.cli_render import (
    STATUS_STYLE,
    interrupt_summary,
    render_status,
    replay_table,
    runs_table,
    short,
)
from graph.cli_runs import (
    Answerer,
    CliError,
    RunMeta,
    Session,
    build_app,
    check_run_id,
    checkpoint_status,
    ensure_not_driven,
    exit_code,
    load_meta,
    load_task,
    new_run_id,
    open_session,
    owner_alive,
    parse_json_object,
    replay_recorded,
    run_config,
    run_rows,
    save_meta,
)
from graph.cli_trace import trace_table
from nodes.models.select import ModelConfigError
from state.store.sqlite import SqliteExecutionStore

__all__ = ["app"]

EPILOG = (
    "Exit codes: 0 COMPLETED · 3 WAITING (approval or answer needed) · "
    "4 FAILED, PARTIAL or BUDGET_EXHAUSTED · 5 CANCELLED · "
    "2 bad input (unknown run, bad task file, unknown architecture, bad model string) · "
    "1 internal error (EXECGRAPH_DEBUG=1 shows the traceback). "
    "Files live under --home (default: $EXECGRAPH_HOME or ./.execgraph)."
)

app = typer.Typer(
    name="execgraph",
    help="Run tasks as controlled, recoverable actions; approve, resume, cancel, inspect.",
    epilog=EPILOG,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)

HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="Run directory (default: $EXECGRAPH_HOME or ./.execgraph)."),
]
NoInputOpt = Annotated[
    bool, typer.Option("--no-input", help="Never prompt; stop WAITING instead (exit 3).")
]
RunIdArg = Annotated[str, typer.Argument(help="The run id (LangGraph thread id).")]


# --------------------------------------------------------------------------- plumbing


def _handled(fn: Callable[..., int | None]) -> Callable[..., None]:
    """One red line and a documented exit code for every failure; no raw traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except typer.Exit:
            raise
        except (CliError, ModelConfigError) as exc:
            err.print(Text(f"error: {exc}", style="bold red"), soft_wrap=True)
            raise typer.Exit(getattr(exc, "code", 2)) from None
        except KeyboardInterrupt:
            err.print(Text("interrupted; continue with: execgraph resume RUN_ID", style="yellow"))
            raise typer.Exit(130) from None
        except Exception as exc:
            if os.environ.get("EXECGRAPH_DEBUG") == "1":
                traceback.print_exc()
            detail = short(str(exc), 200)
            err.print(
                Text(f"internal error: {type(exc).__name__}: {detail}", style="bold red"),
                Text("(set EXECGRAPH_DEBUG=1 for the traceback)", style="dim"),
                soft_wrap=True,
            )
            raise typer.Exit(1) from None
        raise typer.Exit(code or 0)

    return wrapper


def _home(home: Path | None) -> Path:
    base = (home if home is not None else default_home()).expanduser().resolve()
    if base.exists() and not base.is_dir():
        raise CliError(f"--home {base} is not a directory")
    return base


def _interactive(no_input: bool) -> bool:
    return not no_input and sys.stdin.isatty()


# --------------------------------------------------------------------------- commands


def _start(
    task_file: Path | None,
    arch: str,
    model: str,
    home: Path | None,
    run_id: str | None,
    auto_approve: bool,
    no_input: bool,
    tools: str | None,
) -> int:
    base = _home(home)
    if arch not in ARCHITECTURES:
        raise CliError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    if task_file is not None:
        task = load_task(task_file)
    else:
        from graph.demo import demo_task

        task = demo_task()
    rid = check_run_id(run_id) if run_id else new_run_id()
    if (base / "runs" / f"{rid}.json").exists():
        raise CliError(f"run {rid!r} already exists; continue it with: execgraph resume {rid}")
    workspace = str(base / "workspaces" / rid)
    meta = RunMeta(rid, arch, model, task, time.time(), workspace, tools)
    answerer: Answerer = "approve" if auto_approve else "ask" if _interactive(no_input) else "stop"
    session = Session(meta, base, build_app(meta, base), answerer)
    save_meta(base, meta)
    out.print(
        Text(f"run {rid}", style="bold"),
        Text(f"· arch {arch} · model {model} · workspace {workspace}", style="dim"),
        soft_wrap=True,
    )
    if auto_approve:
        out.print(Text("--auto-approve: every approval request will be approved", style="cyan"))
    return drive(session, {"task": task})


TaskArg = Annotated[
    Path | None, typer.Argument(help="A JSON TaskSpec file (default: the demo task).")
]
ArchOpt = Annotated[str, typer.Option("--arch", help="react | workflow | plan_execute | hybrid.")]
ModelOpt = Annotated[
    str, typer.Option("--model", help="'offline' (no network) or 'provider:model'.")
]
RunIdOpt = Annotated[str | None, typer.Option("--run-id", help="Run id (default: generated).")]
AutoOpt = Annotated[
    bool, typer.Option("--auto-approve", help="Approve every approval request (scripts).")
]
ToolsOpt = Annotated[
    str | None,
    typer.Option(
        "--tools",
        help="MODULE:ATTR — a list of tools/adapters (or a function of the workspace "
        "returning one) to use instead of the demo toolkit.",
    ),
]


@app.command(epilog=EPILOG)
@_handled
def run(
    task_file: TaskArg = None,
    arch: ArchOpt = "react",
    model: ModelOpt = "offline",
    home: HomeOpt = None,
    run_id: RunIdOpt = None,
    auto_approve: AutoOpt = False,
    no_input: NoInputOpt = False,
    tools: ToolsOpt = None,
) -> int:
    """Run a task (default: the research demo) and stream its progress."""
    return _start(task_file, arch, model, home, run_id, auto_approve, no_input, tools)


@app.command(epilog=EPILOG)
@_handled
def demo(
    arch: ArchOpt = "react",
    model: ModelOpt = "offline",
    home: HomeOpt = None,
    run_id: RunIdOpt = None,
    auto_approve: AutoOpt = False,
    no_input: NoInputOpt = False,
) -> int:
    """Run the research demo (same as `execgraph run` with no task file)."""
    return _start(None, arch, model, home, run_id, auto_approve, no_input, None)


@app.command(epilog=EPILOG)
@_handled
def resume(
    run_id: RunIdArg,
    answer: Annotated[
        str | None, typer.Option("--answer", help="Answer to a pending question.")
    ] = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
) -> int:
    """Continue a run in this process (after a crash, or to answer a question)."""
    base = _home(home)
    ensure_not_driven(base, run_id)
    session = open_session(run_id, base, "ask" if _interactive(no_input) else "stop")
    state = session.graph.get_state(session.config)
    inp: Any = None
    if state.interrupts:
        if answer is not None:
            inp = Command(resume=answer_questions(state, run_id, answer))
        else:
            answers = answers_for(state.interrupts, session.answerer)
            if answers is None:
                return report(session)
            inp = Command(resume=answers)
    elif not state.values:
        inp = {"task": session.meta.task}  # stopped before its first checkpoint
    elif not state.next and state.values.get("status") not in (None, "RUNNING", "WAITING"):
        return report(session)  # already finished
    # An unfinished run with nothing scheduled was killed between a step's durable writes
    # and its next checkpoint: driving it with no input replays the saved writes.
    out.print(Text(f"resuming run {run_id}", style="bold"))
    return drive(session, inp)


def _approve_like(
    run_id: str,
    home: Path | None,
    no_input: bool,
    call: str | None,
    decide: Callable[[Any], dict[str, Any]],
    single: bool = False,
) -> int:
    base = _home(home)
    ensure_not_driven(base, run_id)
    session = open_session(run_id, base, "ask" if _interactive(no_input) else "stop")
    state = session.graph.get_state(session.config)
    pending = select_approvals(state, run_id, call, single=single)
    answers = {}
    for item in pending:
        answers[item.id] = decide(item.value)
        decide_action = answers[item.id]["action"]
        verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}[decide_action]
        out.print(Text(f"{verb}: {interrupt_summary(item.value)}", style="cyan"), soft_wrap=True)
    return drive(session, Command(resume=answers))


CallOpt = Annotated[
    str | None, typer.Option("--call", help="Answer only the approval of this call id.")
]


@app.command(epilog=EPILOG)
@_handled
def approve(
    run_id: RunIdArg, call: CallOpt = None, home: HomeOpt = None, no_input: NoInputOpt = False
) -> int:
    """Approve pending approval requests and continue the run."""
    return _approve_like(
        run_id, home, no_input, call, lambda v: {"action": "approve", "approver": "cli"}
    )


@app.command(epilog=EPILOG)
@_handled
def reject(
    run_id: RunIdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to the model).")] = "",
    call: CallOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
) -> int:
    """Reject pending approval requests and continue the run."""
    answer = {"action": "reject", "reason": reason, "approver": "cli"}
    return _approve_like(run_id, home, no_input, call, lambda v: answer)


@app.command(epilog=EPILOG)
@_handled
def edit(
    run_id: RunIdArg,
    args: Annotated[str, typer.Option("--args", help="New arguments as a JSON object.")],
    call: CallOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
) -> int:
    """Replace a pending call's arguments (validated and authorized again) and continue."""
    arguments = parse_json_object(args, "--args")
    answer = {"action": "edit", "arguments": arguments, "approver": "cli"}
    return _approve_like(run_id, home, no_input, call, lambda v: answer, single=True)


@app.command(epilog=EPILOG)
@_handled
def cancel(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Ask a run to stop: a running run stops CANCELLED; a paused one is ended now."""
    from nodes.cancel import request_cancel
    from state.store.sqlite import SqliteExecutionStore

    base = _home(home)
    meta = load_meta(base, run_id)
    with SqliteExecutionStore(base / "exec.db") as store:
        request_cancel(store, run_id, reason="cancelled from the command line")
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
    out.print(Text(f"cancel requested; ending run {run_id} now", style="bold"))
    session = Session(meta, base, build_app(meta, base), "reject")
    state = session.graph.get_state(session.config)
    inp: Any = None
    if state.interrupts:
        answers = answers_for(state.interrupts, "reject")
        inp = Command(resume=answers)
    elif not state.values:
        inp = {"task": meta.task}
    return drive(session, inp)


@app.command(epilog=EPILOG)
@_handled
def status(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Show a run's status, pending interrupts and budget."""
    base = _home(home)
    meta = load_meta(base, run_id)
    graph = build_app(meta, base, read_only=True)
    state = graph.get_state(run_config(run_id))
    render_status(out, meta, state, owner_alive(base, run_id), suffix(base))
    return 0


@app.command(epilog=EPILOG)
@_handled
def runs(home: HomeOpt = None) -> int:
    """List the runs under --home with their current status."""
    base = _home(home)
    rows = run_rows(base)
    if not rows:
        out.print(Text(f"no runs under {base}"))
        return 0
    out.print(runs_table(rows))
    return 0


@app.command(epilog=EPILOG)
@_handled
def trace(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Show a run's event timeline from the execution store."""
    base = _home(home)
    load_meta(base, run_id)
    with SqliteExecutionStore(base / "exec.db") as store:
        events = store.events(run_id)
    if not events:
        out.print(Text(f"run {run_id} has no events yet"))
        return 0
    out.print(trace_table(events))
    return 0


@app.command(epilog=EPILOG)
@_handled
def replay(run_id: RunIdArg, home: HomeOpt = None) -> int:
    """Re-run a recorded run's control logic: no model call, no side effect; show any diff.

    Exit 0 when the replay reproduces the recording, 4 when it diverges (a changed policy,
    verifier or tool set shows up here).
    """
    base = _home(home)
    meta = load_meta(base, run_id)
    with SqliteExecutionStore(base / "exec.db") as store:
        report = replay_recorded(meta, base, store)
    out.print(replay_table(report))
    return 0 if report.same else 4


if __name__ == "__main__":  # pragma: no cover
    app()
