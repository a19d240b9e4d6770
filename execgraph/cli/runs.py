"""Run metadata and resuming for the ``execgraph`` CLI.

A run is driven by one process at a time but may be continued by any later one
(``approve``, ``resume``, ``cancel``), so everything needed to rebuild the *same* graph is
written to ``home/runs/<run_id>.json`` when the run starts: architecture, model string,
task, workspace and the optional ``--tools`` import path. The run id is the LangGraph
``thread_id``; statuses come from the checkpointer, never from the metadata file.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from execgraph.cli.hints import home_flag, resume_line
from execgraph.cli.python_runs import (
    PYTHON_ARCH,
    PythonRun,
    continue_in_python,
    python_run,
    python_runs,
)
from execgraph.state.contracts import RunStatus, TaskSpec
from execgraph.state.errors import CliError
from execgraph.tools.tool_source import load_tools, tool_source

__all__ = [
    "EXIT_CODES",
    "Answerer",
    "CliError",
    "RunMeta",
    "Session",
    "build_app",
    "check_database",
    "check_run_id",
    "checkpoint_status",
    "database_label",
    "exit_code",
    "known_run",
    "list_runs",
    "load_meta",
    "load_task",
    "load_tools",
    "new_run_id",
    "open_session",
    "parse_json_object",
    "replay_recorded",
    "run_config",
    "run_rows",
    "save_meta",
    "tool_source",
]

EXIT_CODES: dict[str, int] = {
    RunStatus.COMPLETED: 0,
    RunStatus.WAITING: 3,
    RunStatus.FAILED: 4,
    RunStatus.PARTIAL: 4,
    RunStatus.BUDGET_EXHAUSTED: 4,
    RunStatus.CANCELLED: 5,
}
"""Process exit code per final status (2 = bad input, 1 = internal error)."""

_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class RunMeta:
    """What a later process needs to rebuild a run's graph."""

    run_id: str
    arch: str
    model: str
    task: dict[str, Any]
    created: float
    workspace: str
    tools: str | None = None
    database: str | None = None
    """Where the run's records and checkpoints are when not in the home's SQLite: the
    PostgreSQL database's name, host and port (never its DSN, which may hold a password)."""


def check_database(dsn: str | None) -> str | None:
    """``--database`` as given, if it is a PostgreSQL DSN; anything else is bad input."""
    if dsn is not None and not dsn.startswith(("postgresql://", "postgres://")):
        raise CliError("--database takes a postgresql:// DSN")
    return dsn


def database_label(dsn: str | None) -> str | None:
    """How a run's metadata names its database (no password), None for the home's SQLite."""
    if dsn is None:
        return None
    from execgraph.state.store.postgres import database_name

    return database_name(dsn)


def exit_code(status: str | None) -> int:
    """The documented exit code of a run that stopped with ``status``."""
    return EXIT_CODES.get(str(status), 1)


def run_config(run_id: str) -> dict[str, Any]:
    """The LangGraph config of a run: its id is the thread id."""
    return {"configurable": {"thread_id": run_id}}


def new_run_id() -> str:
    """A sortable, readable run id, e.g. ``run-20260101-120000-3f9a``."""
    return time.strftime("run-%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(2)


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is safe as a file name; otherwise a CliError."""
    if not _RUN_ID_RE.match(run_id):
        raise CliError(
            f"run id {run_id!r} is not valid: use letters, digits, '.', '_' and '-' (max 128)"
        )
    return run_id


def _runs_dir(home: Path) -> Path:
    return home / "runs"


def save_meta(home: Path, meta: RunMeta) -> Path:
    """Write the run's metadata; refuses to overwrite another run's file."""
    path = _runs_dir(home) / f"{check_run_id(meta.run_id)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as fh:
            json.dump(asdict(meta), fh, indent=2, sort_keys=True)
    except FileExistsError:
        raise CliError(
            f"run {meta.run_id!r} already exists; continue it with: "
            f"{resume_line(meta.run_id, home)}"
        ) from None
    return path


def load_meta(home: Path, run_id: str) -> RunMeta:
    """The metadata of ``run_id`` under ``home``, or a CliError naming the problem."""
    path = _runs_dir(home) / f"{check_run_id(run_id)}.json"
    if not path.is_file():
        if python_run(home, run_id) is not None:
            raise CliError(
                f"run {run_id!r} was started from Python, not by this CLI: its graph "
                "(architecture, tools, model) is not recorded, so the CLI cannot rebuild it; "
                f"{continue_in_python(run_id)} (execgraph status and trace show it)"
            )
        raise CliError(
            f"unknown run id {run_id!r} in {home} (list runs with: execgraph runs{home_flag(home)})"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return RunMeta(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise CliError(f"run metadata {path} is unreadable ({type(exc).__name__})") from None


def known_run(home: Path, run_id: str) -> RunMeta | PythonRun:
    """The CLI's metadata of ``run_id``, or what the records hold of a run started from
    Python (for the commands that need no graph: status, trace, cancel, reconcile)."""
    path = _runs_dir(home) / f"{check_run_id(run_id)}.json"
    found = None if path.is_file() else python_run(home, run_id)
    return found if found is not None else load_meta(home, run_id)


def list_runs(home: Path) -> list[RunMeta]:
    """Every run recorded under ``home``, oldest first (unreadable files are skipped)."""
    metas = []
    for path in sorted(_runs_dir(home).glob("*.json")):
        try:
            metas.append(load_meta(home, path.stem))
        except CliError:
            continue
    return sorted(metas, key=lambda m: (m.created, m.run_id))


def load_task(path: Path) -> dict[str, Any]:
    """A TaskSpec from a JSON file, validated; every failure is a one-line CliError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"task file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"task file {str(path)!r} cannot be read ({type(exc).__name__})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"task file {str(path)!r} is not valid JSON: {exc.msg} "
            f"(line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(raw, dict):
        raise CliError(f"task file {str(path)!r} must hold a JSON object (a TaskSpec)")
    try:
        TaskSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "task"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise CliError(
            f"task file {str(path)!r} is not a valid TaskSpec: {where}: {first['msg']}{more}"
        ) from None
    return raw


def build_app(
    meta: RunMeta, home: Path, *, read_only: bool = False, database: str | None = None
) -> Any:
    """Compile the run's graph exactly as it was started (same arch, tools, model).

    ``read_only`` swaps the model for an empty script: reading state needs the graph's
    shape, not a provider (whose API key may be missing here); a model call would fail
    loudly rather than spend anything. ``database`` is the PostgreSQL DSN a run started
    with ``--database`` keeps its state in; it must be given again for that run (and only
    for it), or the graph would read an empty SQLite home instead.
    """
    from execgraph.demo.named import named_graph
    from execgraph.testing import ScriptedChatModel

    _same_database(meta, database)
    model: Any = ScriptedChatModel(replies=[]) if read_only else meta.model
    shared: dict[str, Any] = {"database": database} if database is not None else {}
    return named_graph(
        meta.arch,
        model=model,
        tools=meta.tools,
        home=home,
        workspace=Path(meta.workspace),
        **shared,
    )


def _same_database(meta: RunMeta, database: str | None) -> None:
    """Refuse to continue a run on state other than the state it started on."""
    given = database_label(check_database(database))
    if meta.database == given:
        return
    if meta.database is None:
        raise CliError(
            f"run {meta.run_id!r} keeps its state in the SQLite files of its home, not in "
            f"PostgreSQL {given}; drop --database (and unset EXECGRAPH_DATABASE)"
        )
    if given is None:
        raise CliError(
            f"run {meta.run_id!r} keeps its state in PostgreSQL {meta.database}; give its "
            "DSN with --database or EXECGRAPH_DATABASE"
        )
    raise CliError(
        f"run {meta.run_id!r} keeps its state in PostgreSQL {meta.database}, not {given}"
    )


def checkpoint_status(home: Path, run_id: str) -> tuple[str | None, bool]:
    """(status, waiting on an interrupt) read straight from the checkpoint database.

    No graph is built, so listing runs needs no model, tools or API keys.
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = home / "checkpoints.db"
    if not path.is_file():
        return None, False
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = SqliteSaver(conn).get_tuple(
            {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
        )
    except sqlite3.Error:
        return None, False
    finally:
        conn.close()
    if found is None:
        return None, False
    status = found.checkpoint.get("channel_values", {}).get("status")
    waiting = any(write[1] == "__interrupt__" for write in found.pending_writes or ())
    return (str(status) if status else None), waiting


# --------------------------------------------------------------------------- interrupts

Answerer = Literal["ask", "approve", "reject", "stop"]
"""Who answers interrupts: a person at a prompt, auto-approve, cancel (reject), nobody."""


# --------------------------------------------------------------------------- sessions


@dataclass
class Session:
    """A run being continued by this process: its metadata, graph and who answers."""

    meta: RunMeta
    home: Path
    graph: Any
    answerer: Answerer

    @property
    def config(self) -> dict[str, Any]:
        return run_config(self.meta.run_id)


def open_session(
    run_id: str, home: Path, answerer: Answerer = "stop", database: str | None = None
) -> Session:
    """Rebuild a recorded run's graph to continue it here (on ``database``, when it
    started on one)."""
    meta = load_meta(home, run_id)
    return Session(meta, home, build_app(meta, home, database=database), answerer)


def _created(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def run_rows(home: Path) -> list[tuple[str, str, str, str, str]]:
    """(id, arch, model, created, current status) of every run under ``home``: the CLI's
    own, then those started from Python (arch ``PYTHON_ARCH``: not rebuildable here)."""
    rows = []
    metas = list_runs(home)
    for meta in metas:
        status, waiting = checkpoint_status(home, meta.run_id)
        shown = "WAITING" if waiting else status or "NOT STARTED"
        if meta.database is not None:  # its checkpoints are not in this home
            shown = f"on PostgreSQL {meta.database} (execgraph status {meta.run_id} --database)"
        rows.append((meta.run_id, meta.arch, meta.model, _created(meta.created), shown))
    for run in python_runs(home, {m.run_id for m in metas}):
        status, waiting = checkpoint_status(home, run.run_id)
        shown = "WAITING" if waiting else status or run.finished or "UNKNOWN"
        rows.append((run.run_id, PYTHON_ARCH, run.model, _created(run.created), shown))
    return rows


def parse_json_object(raw: str, what: str) -> dict[str, Any]:
    """A JSON object from the command line, or a one-line CliError."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise CliError(f"{what} must be a JSON object of the new arguments")
    return value


def replay_recorded(meta: RunMeta, home: Path, store: Any) -> Any:
    """Replay a recorded run with the tools and checks it ran with (no model, no effects)."""
    from functools import partial

    from execgraph.demo.build import DEMO_STAGES, demo_tools
    from execgraph.demo.research import RESEARCH_CHECKS
    from execgraph.graph.build import build_graph
    from execgraph.replay import replay_run

    workspace = Path(meta.workspace)
    if meta.tools is None:
        build = partial(build_graph, meta.arch, stages=DEMO_STAGES)
        tools, checks = demo_tools(workspace), RESEARCH_CHECKS
    else:
        build, tools, checks = (
            partial(build_graph, meta.arch),
            load_tools(meta.tools, workspace),
            {},
        )
    return replay_run(
        build, tools, store, meta.run_id, meta.task, checks=checks, workspace=workspace
    )
