"""The ``execgraph`` command line: run, pause, approve, resume, cancel and inspect runs.

Shared options and failure handling live in :mod:`execgraph.cli.options`, the read-only
commands in :mod:`execgraph.cli.inspection`, run metadata and graph rebuilding in
:mod:`execgraph.cli.runs`, rich output in :mod:`execgraph.cli.render`. With
``--engine temporal`` a command only dispatches to :mod:`execgraph.cli.temporal_runs`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from langgraph.types import Command
from rich.text import Text

from execgraph.cli.drive import answers_for, drive, out, report
from execgraph.cli.eval_command import COMMANDS as EVAL_COMMANDS
from execgraph.cli.hints import resume_line
from execgraph.cli.inspection import COMMANDS as INSPECT_COMMANDS
from execgraph.cli.options import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    EPILOG,
    AddressOpt,
    ArchOpt,
    AutoOpt,
    CallOpt,
    DatabaseOpt,
    EngineOpt,
    HomeOpt,
    ModelOpt,
    NamespaceOpt,
    NoInputOpt,
    RunIdArg,
    RunIdOpt,
    TaskArg,
    TaskQueueOpt,
    ToolsOpt,
    handled,
    home_dir,
    interactive,
    this_run,
)
from execgraph.cli.prompts import answer_questions, automatic_answer, select_approvals
from execgraph.cli.python_runs import PythonRun, continue_in_python
from execgraph.cli.render import STATUS_STYLE, interrupt_summary
from execgraph.cli.run_metrics import COMMANDS as METRICS_COMMANDS
from execgraph.cli.runs import (
    Answerer,
    CliError,
    RunMeta,
    Session,
    build_app,
    check_database,
    check_run_id,
    checkpoint_status,
    database_label,
    ensure_not_driven,
    exit_code,
    known_run,
    load_task,
    new_run_id,
    open_session,
    owner_alive,
    parse_json_object,
    run_config,
    save_meta,
    tool_source,
)
from execgraph.cli.temporal_runs import (
    Temporal,
    answer_run,
    cancel_run,
    engine_target,
    start_run,
)
from execgraph.cli.worker_command import worker
from execgraph.graph.build import ARCHITECTURES

__all__ = ["app"]

app = typer.Typer(
    name="execgraph",
    help="Run tasks as controlled, recoverable actions; approve, resume, cancel, inspect.",
    epilog=EPILOG,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _start(
    task_file: Path | None,
    arch: str,
    model: str,
    home: Path | None,
    run_id: str | None,
    auto_approve: bool,
    no_input: bool,
    tools: str | None,
    where: Temporal | None = None,
    database: str | None = None,
) -> int:
    base = home_dir(home)
    check_database(database)
    if arch not in ARCHITECTURES:
        raise CliError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    if tools is not None:
        tool_source(tools)  # a bad --tools is reported before anything else
    if task_file is not None:
        task = load_task(task_file)
    elif tools is not None:
        raise CliError(
            "a run with your own --tools needs a TASK file (a TaskSpec as JSON: goal, "
            "success_checks, budgets); the default task is the demo's"
        )
    else:
        from execgraph.demo.build import demo_task

        task = demo_task()
    rid = check_run_id(run_id) if run_id else new_run_id()
    if where is not None:
        from execgraph.temporal.messages import RunSpec

        spec = RunSpec(rid, task=task, arch=arch, model=model, tools=tools)
        return start_run(where, spec, auto_approve=auto_approve)
    if (base / "runs" / f"{rid}.json").exists():
        raise CliError(f"run {rid!r} already exists; continue it with: {resume_line(rid, base)}")
    workspace = str(base / "workspaces" / rid)
    meta = RunMeta(rid, arch, model, task, time.time(), workspace, tools, database_label(database))
    answerer: Answerer = "approve" if auto_approve else "ask" if interactive(no_input) else "stop"
    session = Session(meta, base, build_app(meta, base, database=database), answerer)
    save_meta(base, meta)
    this_run(rid, base)
    out.print(
        Text(f"run {rid}", style="bold"),
        Text(f"· arch {arch} · model {model} · workspace {workspace}", style="dim"),
        soft_wrap=True,
    )
    if auto_approve:
        out.print(Text("--auto-approve: every approval request will be approved", style="cyan"))
    if task_file is not None and model.strip().lower() == "offline":
        _offline_note(task)
    return drive(session, {"task": task})


def _offline_note(task: dict[str, Any]) -> None:
    """``--model offline`` plays the demo; a task of the user's own gets told so."""
    from execgraph.demo.build import demo_task

    if task.get("goal") != demo_task()["goal"]:
        out.print(
            Text(
                "note: --model offline is the demo's scripted policy: it can only run the "
                "demo (search the corpus, read, draft report.md, publish), whatever the "
                "task's goal says; give --model provider:model (e.g. openai:gpt-4o-mini) "
                "to run your own task",
                style="yellow",
            ),
            soft_wrap=True,
        )


@app.command(epilog=EPILOG)
@handled
def run(
    task_file: TaskArg = None,
    arch: ArchOpt = "react",
    model: ModelOpt = "offline",
    home: HomeOpt = None,
    run_id: RunIdOpt = None,
    auto_approve: AutoOpt = False,
    no_input: NoInputOpt = False,
    tools: ToolsOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Run a task (default: the research demo) and stream its progress."""
    where = engine_target(engine, address, task_queue, namespace)
    return _start(
        task_file, arch, model, home, run_id, auto_approve, no_input, tools, where, database
    )


@app.command(epilog=EPILOG)
@handled
def demo(
    arch: ArchOpt = "react",
    model: ModelOpt = "offline",
    home: HomeOpt = None,
    run_id: RunIdOpt = None,
    auto_approve: AutoOpt = False,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Run the research demo (same as `execgraph run` with no task file)."""
    where = engine_target(engine, address, task_queue, namespace)
    return _start(None, arch, model, home, run_id, auto_approve, no_input, None, where, database)


@app.command(epilog=EPILOG)
@handled
def resume(
    run_id: RunIdArg,
    answer: Annotated[
        str | None, typer.Option("--answer", help="Answer to a pending question.")
    ] = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
) -> int:
    """Continue a run in this process (after a crash, or to answer a question)."""
    base = home_dir(home)
    ensure_not_driven(base, run_id)
    answerer: Answerer = "ask" if interactive(no_input) else "stop"
    session = open_session(run_id, base, answerer, database)
    this_run(run_id, base)
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
    database: str | None = None,
) -> int:
    base = home_dir(home)
    ensure_not_driven(base, run_id)
    answerer: Answerer = "ask" if interactive(no_input) else "stop"
    session = open_session(run_id, base, answerer, database)
    this_run(run_id, base)
    state = session.graph.get_state(session.config)
    pending = select_approvals(state, run_id, call, single=single)
    answers = {}
    for item in pending:
        answers[item.id] = decide(item.value)
        decide_action = answers[item.id]["action"]
        verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}[decide_action]
        out.print(Text(f"{verb}: {interrupt_summary(item.value)}", style="cyan"), soft_wrap=True)
    return drive(session, Command(resume=answers))


@app.command(epilog=EPILOG)
@handled
def approve(
    run_id: RunIdArg,
    call: CallOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Approve pending approval requests and continue the run."""
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        return answer_run(where, run_id, "approve", call=call)
    answer = {"action": "approve", "approver": "cli"}
    return _approve_like(run_id, home, no_input, call, lambda v: answer, database=database)


@app.command(epilog=EPILOG)
@handled
def reject(
    run_id: RunIdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to the model).")] = "",
    call: CallOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Reject pending approval requests and continue the run."""
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        return answer_run(where, run_id, "reject", call=call, reason=reason)
    answer = {"action": "reject", "reason": reason, "approver": "cli"}
    return _approve_like(run_id, home, no_input, call, lambda v: answer, database=database)


@app.command(epilog=EPILOG)
@handled
def edit(
    run_id: RunIdArg,
    args: Annotated[str, typer.Option("--args", help="New arguments as a JSON object.")],
    call: CallOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
) -> int:
    """Replace a pending call's arguments (validated and authorized again) and continue."""
    arguments = parse_json_object(args, "--args")
    answer = {"action": "edit", "arguments": arguments, "approver": "cli"}
    return _approve_like(
        run_id, home, no_input, call, lambda v: answer, single=True, database=database
    )


@app.command(epilog=EPILOG)
@handled
def reconcile(
    run_id: RunIdArg,
    call_id: Annotated[str, typer.Argument(help="The call whose outcome is unknown.")],
    happened: Annotated[
        bool | None,
        typer.Option(
            "--happened/--did-not-happen",
            help="What you found out: the call took effect, or it did not.",
        ),
    ] = None,
    by: Annotated[str, typer.Option("--by", help="Who decided (recorded).")] = "",
    note: Annotated[str, typer.Option("--note", help="Why (recorded).")] = "",
    home: HomeOpt = None,
) -> int:
    """Settle a call whose outcome is unknown: it happened (committed) or it did not
    (safe to run again). The verdict is an event naming who decided."""
    import getpass

    from execgraph.nodes.executor.settle import reconcile as settle
    from execgraph.state.store.sqlite import SqliteExecutionStore

    if happened is None:
        raise CliError("say what you found out: --happened or --did-not-happen")
    base = home_dir(home)
    known_run(base, run_id)  # a run started from Python is settled the same way
    with SqliteExecutionStore(base / "exec.db") as store:
        result = settle(
            store, run_id, call_id, happened=happened, decided_by=by or getpass.getuser(), note=note
        )
    verdict = "took effect: committed" if happened else "took no effect: safe to run again"
    out.print(Text(f"{call_id} of run {run_id} {verdict} ({result.side_effect.summary})"))
    return 0


@app.command(epilog=EPILOG)
@handled
def cancel(
    run_id: RunIdArg,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Ask a run to stop: a running run stops CANCELLED; a paused one is ended now."""
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        return cancel_run(where, run_id)
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


app.command(epilog=EPILOG)(worker)
for _command in INSPECT_COMMANDS:
    app.command(epilog=EPILOG)(_command)
for _command in METRICS_COMMANDS:
    app.command(epilog=EPILOG)(_command)

for _command in EVAL_COMMANDS:  # eval_ is the command "eval"
    app.command(name=_command.__name__.removesuffix("_"))(_command)
