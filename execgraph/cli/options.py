"""What every ``execgraph`` command shares: its options, its home and how it fails.

Options are declared once here so a flag means the same thing (name, default, help) in
every command that takes it; :func:`handled` gives every command the same documented
exit codes and one red line instead of a traceback.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import sys
import traceback
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from execgraph.cli.inert import inert, short
from execgraph.state.errors import CliError, UsageError
from execgraph.state.home import default_home

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_TASK_QUEUE",
    "EPILOG",
    "EXIT_CODES",
    "AddressOpt",
    "ArchOpt",
    "ArgsHashOpt",
    "AutoOpt",
    "CallOpt",
    "DatabaseOpt",
    "EngineOpt",
    "HomeOpt",
    "ModelOpt",
    "NamespaceOpt",
    "NoInputOpt",
    "RunIdArg",
    "RunIdOpt",
    "TaskArg",
    "TaskQueueOpt",
    "ToolsOpt",
    "closing",
    "err",
    "exit_code",
    "exit_without_teardown",
    "handled",
    "home_dir",
    "interactive",
    "this_run",
]

EPILOG = (
    "Exit codes: 0 COMPLETED · 3 WAITING (approval or answer needed) · "
    "4 FAILED, PARTIAL or BUDGET_EXHAUSTED · 5 CANCELLED (or TERMINATED on Temporal) · "
    "2 bad input (unknown run, bad task file, unknown architecture, bad model string) · "
    "1 internal error (EXECGRAPH_DEBUG=1 shows the traceback). "
    "EXECGRAPH_LOG=WARNING prints why tools failed (also: execgraph trace RUN_ID). "
    "Files live under --home (default: $EXECGRAPH_HOME or ./.execgraph)."
)

EXIT_CODES: dict[str, int] = {
    "COMPLETED": 0,
    "WAITING": 3,
    "FAILED": 4,
    "PARTIAL": 4,
    "BUDGET_EXHAUSTED": 4,
    "CANCELLED": 5,
    "TERMINATED": 5,
}
"""Process exit code per final status (2 = bad input, 1 = internal error)."""


def exit_code(status: str | None) -> int:
    """The documented exit code of a run that stopped with ``status``."""
    return EXIT_CODES.get(str(status), 1)


err = Console(stderr=True, highlight=False)

_current: ContextVar[tuple[str, str] | None] = ContextVar("execgraph_cli_run", default=None)
_closers: ContextVar[list[Callable[[], None]] | None] = ContextVar(
    "execgraph_cli_closers", default=None
)

HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="Run directory (default: $EXECGRAPH_HOME or ./.execgraph)."),
]
NoInputOpt = Annotated[
    bool, typer.Option("--no-input", help="Never prompt; stop WAITING instead (exit 3).")
]
RunIdArg = Annotated[str, typer.Argument(help="The run id (LangGraph thread id).")]
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
        help="The run's tool set instead of the demo's: MODULE:ATTR, a list of "
        "tools/adapters (or a function of the workspace returning one) imported here; "
        "with --engine temporal, the name of a tool set the workers registered.",
    ),
]
CallOpt = Annotated[
    str | None, typer.Option("--call", help="Answer only the approval of this call id.")
]
ArgsHashOpt = Annotated[
    str | None,
    typer.Option(
        "--args-hash",
        help="The arguments' hash `execgraph status` showed (8+ hex digits): the answer "
        "is refused if the call's arguments changed since.",
    ),
]

EngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        envvar="EXECGRAPH_ENGINE",
        help="embedded (this process, the home's SQLite) | temporal (workers on a "
        "Temporal server: see `execgraph worker`).",
    ),
]
AddressOpt = Annotated[
    str,
    typer.Option(
        "--address",
        envvar="EXECGRAPH_TEMPORAL_ADDRESS",
        help="The Temporal server's HOST:PORT (--engine temporal).",
    ),
]
TaskQueueOpt = Annotated[
    str,
    typer.Option(
        "--task-queue",
        envvar="EXECGRAPH_TASK_QUEUE",
        help="The Temporal task queue the workers poll (--engine temporal).",
    ),
]
NamespaceOpt = Annotated[
    str,
    typer.Option(
        "--namespace",
        envvar="EXECGRAPH_TEMPORAL_NAMESPACE",
        help="The Temporal namespace (--engine temporal).",
    ),
]
DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database",
        envvar="EXECGRAPH_DATABASE",
        help="A postgresql:// DSN holding the runs' records and checkpoints (default: "
        "the SQLite files of --home).",
    ),
]
DEFAULT_ADDRESS = "127.0.0.1:7233"
DEFAULT_TASK_QUEUE = "execgraph"
DEFAULT_NAMESPACE = "default"


def show_logs() -> None:
    """``EXECGRAPH_LOG=WARNING`` (or ``INFO``, ``DEBUG``; ``EXECGRAPH_DEBUG=1`` means DEBUG)
    prints the ``execgraph`` logger to stderr: why a tool raised, with its traceback.

    Set per command: a command run without the variable (in the same process, as a test
    runs several) prints nothing of the logger, and one with it prints to today's stderr.
    """
    level = os.environ.get("EXECGRAPH_LOG") or (
        "DEBUG" if os.environ.get("EXECGRAPH_DEBUG") == "1" else ""
    )
    root = logging.getLogger("execgraph")
    for old in [h for h in root.handlers if getattr(h, "_execgraph_cli", False)]:
        root.removeHandler(old)
    if not level:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_InertFormatter("%(levelname)s %(name)s: %(message)s"))
    handler._execgraph_cli = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())


class _InertFormatter(logging.Formatter):
    """Log lines as the terminal may show them: a tool's exception text is inert."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record), lines=True)


def handled(fn: Callable[..., int | None]) -> Callable[..., None]:
    """One red line and a documented exit code for every failure; no raw traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        show_logs()
        _current.set(None)
        closers: list[Callable[[], None]] = []
        _closers.set(closers)
        try:
            code = _run(fn, closers, *args, **kwargs)
        except typer.Exit as exc:
            code = exc.exit_code
        except UsageError as exc:  # bad input of any kind: the CLI's, a model string, a call
            err.print(
                Text(f"error: {inert(str(exc), lines=True)}", style="bold red"), soft_wrap=True
            )
            code = getattr(exc, "code", 2)
        except KeyboardInterrupt:
            err.print(Text(_interrupted(), style="yellow"), soft_wrap=True)
            code = 130
        except Exception as exc:
            if os.environ.get("EXECGRAPH_DEBUG") == "1":
                sys.stderr.write(inert(traceback.format_exc(), lines=True))
            detail = short(str(exc), 200)
            err.print(
                Text(f"internal error: {type(exc).__name__}: {detail}", style="bold red"),
                Text("(set EXECGRAPH_DEBUG=1 for the traceback)", style="dim"),
                soft_wrap=True,
            )
            code = 1
        if _no_teardown and _is_the_program():
            atexit.register(_exit_now, code)
        raise typer.Exit(code)

    return wrapper


def _run(
    fn: Callable[..., int | None], closers: list[Callable[[], None]], *a: Any, **k: Any
) -> int:
    try:
        return fn(*a, **k) or 0
    finally:
        for close in reversed(closers):
            close()


def closing(close: Callable[[], None]) -> None:
    """Have ``close`` called when the running command ends (its engine's connections)."""
    found = _closers.get()
    if found is not None:
        found.append(close)


_no_teardown: list[bool] = []


def exit_without_teardown() -> None:
    """End this process, when its command is done, without CPython's teardown.

    A Temporal client leaves threads of its Rust core behind that can abort the
    interpreter while it tears down (temporalio/sdk-python#300: "PyGILState_Release:
    thread state ... must be current", exit 134 instead of the command's code). A command
    that used one calls this; the process then ends with its exit code right after its
    output is flushed (only when it is the ``execgraph`` program, never inside a test
    runner or a caller's own process).
    """
    _no_teardown.append(True)


def _is_the_program() -> bool:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and str(spec.name).startswith("execgraph.cli"):
        return True  # python -m execgraph.cli
    return Path(str(getattr(main, "__file__", ""))).name == "execgraph"


def _exit_now(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def this_run(run_id: str, flags: str) -> None:
    """Name the run this command acts on (and the flags that reach it again), for what an
    interrupt (Ctrl-C) prints."""
    _current.set((run_id, flags))


def _interrupted() -> str:
    current = _current.get()
    if current is None:
        return "interrupted"
    run_id, flags = current
    run = short(run_id, 200)
    return f"interrupted; run {run} is kept as it was; continue with: execgraph resume {run}{flags}"


def home_dir(home: Path | None) -> Path:
    """``--home`` (or the default) as an absolute directory path; a file there is bad input."""
    base = (home if home is not None else default_home()).expanduser().resolve()
    if base.exists() and not base.is_dir():
        raise CliError(f"--home {base} is not a directory")
    return base


def interactive(no_input: bool) -> bool:
    """Prompts only on a terminal, and never under ``--no-input``."""
    return not no_input and sys.stdin.isatty()
