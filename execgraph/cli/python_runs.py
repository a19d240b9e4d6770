"""Runs under a home that the CLI did not start: found read-only in its two databases.

``build_graph(...)`` with the embedded defaults keeps a run's checkpoints
(``checkpoints.db``) and its execution log (``exec.db``) under the same home as the CLI,
but writes no ``runs/<run_id>.json``: the graph's architecture, tools and model are
Python objects the CLI cannot record or rebuild. Such a run is still listed, shown and
traced: its id from the log's ``run.admitted``/``run.rejected`` events and the
checkpoints' threads, its status from its last checkpoint (or its ``run.finished``
event), the model from the replies it logged. What needs the graph itself — approving,
resuming, replaying — is refused with a line that says to continue in Python.

Both databases are opened read-only (``mode=ro``): listing never creates, migrates or
locks anything another process is using.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph

from execgraph.nodes.model.call import reply_model
from execgraph.state.schema import RunState
from execgraph.state.store.rows import EVENT_SELECT, event_from_row

__all__ = [
    "PYTHON_ARCH",
    "PythonRun",
    "PythonState",
    "continue_in_python",
    "python_run",
    "python_runs",
    "python_state",
]

PYTHON_ARCH = "? (Python)"
"""What the runs table shows as the architecture of a run started from Python."""


@dataclass(frozen=True)
class PythonRun:
    """What the CLI can tell of a run it did not start (the fields of a ``RunMeta``
    that the records hold; the graph's are unknown)."""

    run_id: str
    created: float
    model: str = "?"
    finished: str | None = None  # the status of its run.finished event, if any
    arch: str = PYTHON_ARCH


@dataclass(frozen=True)
class PythonState:
    """A read-only snapshot: the state's values and the values of pending interrupts
    (shaped as ``StateSnapshot`` is read by the status view)."""

    values: dict[str, Any]
    interrupts: tuple[Any, ...] = field(default=())


@dataclass(frozen=True)
class _Pending:
    value: Any


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection | None]:
    if not path.is_file():
        yield None
        return
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        yield conn


def _logged(home: Path, run_id: str | None = None) -> dict[str, PythonRun]:
    """Runs the execution log knows: first event time, the model, a finished status."""
    found: dict[str, PythonRun] = {}
    where, args = ("AND run_id = ?", (run_id,)) if run_id else ("", ())
    with _read_only(home / "exec.db") as conn:
        if conn is None:
            return found
        try:
            starts = conn.execute(
                "SELECT run_id, MIN(ts) FROM events WHERE type IN ('run.admitted', "
                f"'run.rejected') {where} GROUP BY run_id",
                args,
            ).fetchall()
            for rid, ts in starts:
                found[rid] = PythonRun(rid, float(ts), *_model_and_end(conn, rid))
        except sqlite3.Error:
            return found
    return found


def _one(conn: sqlite3.Connection, run_id: str, kind: str, last: bool) -> dict[str, Any]:
    """The payload of the run's first (or last) event of ``kind``, or {}."""
    row = conn.execute(
        f"SELECT {EVENT_SELECT} FROM events WHERE run_id = ? AND type = ? "
        f"ORDER BY seq {'DESC' if last else 'ASC'} LIMIT 1",
        (run_id, kind),
    ).fetchone()
    return dict(event_from_row(row).payload or {}) if row else {}


def _model_and_end(conn: sqlite3.Connection, run_id: str) -> tuple[str, str | None]:
    """The model the run's first reply names, and the status its end was logged with."""
    model = reply_model(_one(conn, run_id, "model.called", last=False).get("message") or {})
    end = _one(conn, run_id, "run.finished", last=True).get("status")
    return model or "?", None if end is None else str(end)


def _threads(home: Path) -> set[str]:
    with _read_only(home / "checkpoints.db") as conn:
        if conn is None:
            return set()
        try:
            return {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
        except sqlite3.Error:
            return set()


def python_runs(home: Path, known: set[str]) -> list[PythonRun]:
    """Runs under ``home`` with records but no CLI metadata (``known`` are the CLI's)."""
    logged = _logged(home)
    for thread in _threads(home) - set(logged):
        logged[thread] = PythonRun(thread, 0.0)  # checkpoints without a log: no time known
    return sorted(
        (r for rid, r in logged.items() if rid not in known), key=lambda r: (r.created, r.run_id)
    )


def python_run(home: Path, run_id: str) -> PythonRun | None:
    """The run ``run_id`` if the records under ``home`` hold it, else None."""
    found = _logged(home, run_id).get(run_id)
    if found is None and run_id in _threads(home):
        found = PythonRun(run_id, 0.0)
    return found


def _reader(saver: SqliteSaver) -> Any:
    """A graph over the shared state schema that only reads: every architecture keeps the
    same channels, so their values load without knowing which graph wrote them."""
    builder = StateGraph(RunState)
    builder.add_node("read", lambda state: {})
    builder.add_edge(START, "read")
    return builder.compile(checkpointer=saver)


class _ForeignNodes(logging.Filter):
    """LangGraph warns of pending sends to nodes the reader does not have: it only reads."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "unknown node name" not in record.getMessage()


@contextmanager
def _quiet() -> Iterator[None]:
    quiet, log = _ForeignNodes(), logging.getLogger("langgraph")
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def python_state(home: Path, run_id: str) -> PythonState:
    """The run's last checkpoint, read-only: values and the pending interrupts' values."""
    with _read_only(home / "checkpoints.db") as conn:
        if conn is None:
            return PythonState({})
        saver = SqliteSaver(conn)
        config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
        try:
            with _quiet():
                values = dict(_reader(saver).get_state(config).values)
            saved = saver.get_tuple(config)
        except sqlite3.Error:
            return PythonState({})
    writes = saved.pending_writes or [] if saved is not None else []
    pending = [
        _Pending(getattr(item, "value", item))
        for _, channel, value in writes
        if channel == "__interrupt__"
        for item in (value if isinstance(value, list | tuple) else [value])
    ]
    return PythonState(values, tuple(pending))


def continue_in_python(run_id: str) -> str:
    """How a run the CLI cannot rebuild is continued: by the graph that started it."""
    return (
        f"continue it in Python with the graph that started it: app.invoke(Command("
        f'resume=...), {{"configurable": {{"thread_id": "{run_id}"}}}})'
    )
