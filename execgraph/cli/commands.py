"""The ``execgraph`` command line: run, pause, approve, resume, cancel and inspect runs.

Each command parses its arguments, reaches its runs through one
:class:`~execgraph.engines.runs.Runs` (:mod:`execgraph.cli.reach` picks the engine from
``--engine``, ``--home``, ``--database``, ...), and prints what it got back. Shared
options and failure handling live in :mod:`execgraph.cli.options`, the read-only
commands in :mod:`execgraph.cli.inspection` and :mod:`execgraph.cli.run_metrics`, what
is printed in :mod:`execgraph.cli.drive` and :mod:`execgraph.cli.render`.

Everything heavier than the options is imported inside the command that needs it, so
``execgraph --help`` starts without LangChain or LangGraph (nor asyncio, nor Typer's rich
help formatter and the Markdown parser it loads: the help is Click's plain text).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from execgraph.cli.eval_command import COMMANDS as EVAL_COMMANDS
from execgraph.cli.inspection import COMMANDS as INSPECT_COMMANDS
from execgraph.cli.options import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    EPILOG,
    AddressOpt,
    ArchOpt,
    ArgsHashOpt,
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
    interactive,
    this_run,
)
from execgraph.cli.reach import Target
from execgraph.cli.run_metrics import COMMANDS as METRICS_COMMANDS
from execgraph.cli.starting import start
from execgraph.cli.worker_command import worker
from execgraph.state.errors import CliError

__all__ = ["app"]

app = typer.Typer(
    name="execgraph",
    help="Run tasks as controlled, recoverable actions; approve, resume, cancel, inspect.",
    epilog=EPILOG,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain Click help: Typer's rich help loads ~2/3 of --help's CPU
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
    target = Target(engine, home, database, address, task_queue, namespace)
    return start(target, task_file, arch, model, run_id, auto_approve, no_input, tools)


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
    target = Target(engine, home, database, address, task_queue, namespace)
    return start(target, None, arch, model, run_id, auto_approve, no_input, None)


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
    from rich.text import Text

    from execgraph.cli.drive import Watcher, answerer, out, report
    from execgraph.cli.inert import short
    from execgraph.engines.answers import reply

    watch = Watcher()
    runs = Target(engine, home, database, address, task_queue, namespace).runs(watch)
    this_run(run_id, runs.flags)
    who = answerer("ask" if interactive(no_input) else "stop", runs.flags)
    if answer is not None:
        answers = reply(runs.status(run_id), answer)
        out.print(Text(f"answered: {short(answer, 2000)}", "cyan"), soft_wrap=True)
        view = runs.answer(run_id, answers, answerer=who)
    else:
        view = runs.resume(run_id, answerer=who)
    watch.done()
    return report(runs, view)


def _answer(
    target: Target,
    run_id: str,
    no_input: bool,
    verb: str,
    choose: Any,
) -> int:
    """Answer the pending approvals ``choose(view)`` picks (each bound to the call it
    prints), print them, continue the run."""
    from rich.text import Text

    from execgraph.cli.approvals import interrupt_summary
    from execgraph.cli.drive import Watcher, answerer, out, report

    watch = Watcher()
    runs = target.runs(watch)
    this_run(run_id, runs.flags)
    view = runs.status(run_id)
    answers = choose(view)
    for item in view.interrupts:
        if item["id"] in answers:
            line = f"{verb}: {interrupt_summary(item['value'], runs.flags)}"
            out.print(Text(line, style="cyan"), soft_wrap=True)
    who = answerer("ask" if interactive(no_input) else "stop", runs.flags)
    view = runs.answer(run_id, answers, answerer=who)
    watch.done()
    return report(runs, view)


@app.command(epilog=EPILOG)
@handled
def approve(
    run_id: RunIdArg,
    call: CallOpt = None,
    args_hash: ArgsHashOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Approve pending approval requests and continue the run (with --args-hash: only
    if the call's arguments are still the ones shown)."""
    from execgraph.engines import answers

    target = Target(engine, home, database, address, task_queue, namespace)
    return _answer(
        target,
        run_id,
        no_input,
        "approved",
        lambda v: answers.approve(v, call, "cli", args_hash),
    )


@app.command(epilog=EPILOG)
@handled
def reject(
    run_id: RunIdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to the model).")] = "",
    call: CallOpt = None,
    args_hash: ArgsHashOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Reject pending approval requests and continue the run."""
    from execgraph.engines import answers

    target = Target(engine, home, database, address, task_queue, namespace)
    return _answer(
        target,
        run_id,
        no_input,
        "rejected",
        lambda v: answers.reject(v, reason, call, "cli", args_hash),
    )


@app.command(epilog=EPILOG)
@handled
def edit(
    run_id: RunIdArg,
    args: Annotated[str, typer.Option("--args", help="New arguments as a JSON object.")],
    call: CallOpt = None,
    args_hash: ArgsHashOpt = None,
    home: HomeOpt = None,
    no_input: NoInputOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Replace a pending call's arguments (validated and authorized again) and continue."""
    from execgraph.cli.task_input import parse_json_object
    from execgraph.engines import answers

    arguments = parse_json_object(args, "--args")
    target = Target(engine, home, database, address, task_queue, namespace)
    return _answer(
        target,
        run_id,
        no_input,
        "edited",
        lambda v: answers.edit(v, arguments, call, "cli", args_hash),
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
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Settle a call whose outcome is unknown: it happened (committed) or it did not
    (safe to run again). The verdict is an event naming who decided."""
    import getpass

    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.cli.inert import short

    if happened is None:
        raise CliError("say what you found out: --happened or --did-not-happen")
    runs = Target(engine, home, database, address, task_queue, namespace).runs()
    result = runs.reconcile(
        run_id, call_id, happened=happened, decided_by=by or getpass.getuser(), note=note
    )
    verdict = "took effect: committed" if happened else "took no effect: safe to run again"
    summary = short(result.side_effect.summary, 300)
    out.print(Text(f"{short(call_id, 40)} of run {short(run_id, 200)} {verdict} ({summary})"))
    return 0


@app.command(epilog=EPILOG)
@handled
def cancel(
    run_id: RunIdArg,
    call: Annotated[
        str | None,
        typer.Option(
            "--call", help="Cancel only this call (its id); the run goes on with its outcome."
        ),
    ] = None,
    home: HomeOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Ask a run to stop: a running run stops CANCELLED; a paused one is ended now.

    With --call, stop only that call: its tool is told to stop (a call waiting for
    approval is refused), it ends cancelled or unknown, and the run goes on.
    """
    from rich.text import Text

    from execgraph.cli.approvals import interrupt_summary
    from execgraph.cli.drive import Watcher, out, report
    from execgraph.cli.inert import short
    from execgraph.cli.options import exit_code
    from execgraph.cli.render import STATUS_STYLE
    from execgraph.engines.embedded.foreign import continue_in_python

    watch = Watcher()
    runs = Target(engine, home, database, address, task_queue, namespace).runs(watch)
    if call is not None:
        return _cancel_call(runs, run_id, call, watch)
    before = runs.status(run_id)
    this_run(run_id, runs.flags)
    ending = not (before.driver or before.ended or before.spec is None)
    run = short(run_id, 200)
    if ending:
        out.print(Text(f"cancel requested; ending run {run}", style="bold"))
        for item in before.interrupts:  # worded as what it is: a cancel, not a person's no
            shown = f"cancelled, not run: {interrupt_summary(item['value'], runs.flags)}"
            out.print(Text(shown, style=STATUS_STYLE["CANCELLED"]), soft_wrap=True)
    view = runs.cancel(run_id, reason="cancelled from the command line")
    watch.done()
    if ending:
        return report(runs, view)
    if before.driver:
        out.print(
            Text(f"cancel requested; process {before.driver} stops run {run} at its next poll")
        )
        return 0
    if before.ended:
        ended = short(before.status, 40)
        out.print(Text(f"run {run} already ended: ") + Text(ended, STATUS_STYLE.get(ended, "")))
        return exit_code(before.status)
    out.print(
        Text(
            f"cancel requested; run {run} was started from Python, so it stops "
            f"CANCELLED when its graph runs next: {short(continue_in_python(run_id), 400)}"
        ),
        soft_wrap=True,
    )
    return 0


def _cancel_call(runs: Any, run_id: str, call_id: str, watch: Any) -> int:
    """``execgraph cancel RUN --call CALL``: log the call's cancel; say where the run is."""
    from rich.text import Text

    from execgraph.cli.drive import out, report
    from execgraph.cli.inert import short
    from execgraph.engines.call_cancel import pending_approval

    before = runs.status(run_id)
    this_run(run_id, runs.flags)
    view = runs.cancel(run_id, reason="cancelled from the command line", call_id=call_id)
    watch.done()
    call, run = short(call_id, 200), short(run_id, 200)
    if pending_approval(before.interrupts, call_id) is not None:
        out.print(Text(f"call {call} cancelled before it ran; run {run} went on"), soft_wrap=True)
        return report(runs, view)
    out.print(
        Text(f"cancel requested for call {call}; run {run} goes on with its outcome"),
        soft_wrap=True,
    )
    return 0


for _command in (worker, *INSPECT_COMMANDS, *METRICS_COMMANDS):
    app.command(epilog=EPILOG)(_command)

for _command in EVAL_COMMANDS:  # eval_ is the command "eval"
    app.command(name=_command.__name__.removesuffix("_"))(_command)
