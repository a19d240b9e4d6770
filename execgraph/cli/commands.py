"""The ``execgraph`` command line: run, pause, approve, resume, cancel and inspect runs.

Shared options and failure handling live in :mod:`execgraph.cli.options`, the read-only
commands in :mod:`execgraph.cli.inspection`, run metadata and graph rebuilding in
:mod:`execgraph.cli.runs`, rich output in :mod:`execgraph.cli.render`. With
``--engine temporal`` a command only dispatches to :mod:`execgraph.cli.temporal_runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from langgraph.types import Command
from rich.text import Text

from execgraph.cli.cancelling import cancel_embedded
from execgraph.cli.drive import answers_for, drive, out, report
from execgraph.cli.eval_command import COMMANDS as EVAL_COMMANDS
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
from execgraph.cli.prompts import answer_questions, select_approvals
from execgraph.cli.render import interrupt_summary
from execgraph.cli.run_metrics import COMMANDS as METRICS_COMMANDS
from execgraph.cli.run_owner import ensure_not_driven
from execgraph.cli.runs import (
    Answerer,
    CliError,
    known_run,
    open_session,
    parse_json_object,
)
from execgraph.cli.starting import start
from execgraph.cli.temporal_connection import engine_target
from execgraph.cli.temporal_runs import (
    answer_question,
    answer_run,
    cancel_run,
)
from execgraph.cli.worker_command import worker

__all__ = ["app"]

app = typer.Typer(
    name="execgraph",
    help="Run tasks as controlled, recoverable actions; approve, resume, cancel, inspect.",
    epilog=EPILOG,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
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
    return start(
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
    return start(None, arch, model, home, run_id, auto_approve, no_input, None, where, database)


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
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Continue a run in this process (after a crash, or to answer a question); on
    Temporal, answer its questions (the workers continue it)."""
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        if answer is None:
            raise CliError("a run on Temporal is continued by its workers: give --answer")
        return answer_question(where, run_id, answer)
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
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Replace a pending call's arguments (validated and authorized again) and continue."""
    arguments = parse_json_object(args, "--args")
    where = engine_target(engine, address, task_queue, namespace)
    if where is not None:
        return answer_run(where, run_id, "edit", call=call, arguments=arguments)
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

    from execgraph.nodes.executor import reconcile as settle
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
    return cancel_embedded(run_id, home, database)


for _command in (worker, *INSPECT_COMMANDS, *METRICS_COMMANDS):
    app.command(epilog=EPILOG)(_command)

for _command in EVAL_COMMANDS:  # eval_ is the command "eval"
    app.command(name=_command.__name__.removesuffix("_"))(_command)
