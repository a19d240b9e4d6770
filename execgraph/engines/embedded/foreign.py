"""Runs the embedded engine did not start: found read-only in their records.

``build_graph(...)`` with the embedded defaults keeps a run's checkpoints and its
execution log under a home too (or in a PostgreSQL database), but writes no record of
the names its graph was built from: its architecture, tools and model are Python
objects. Such a run is still listed, shown and traced: its id from the log's
``run.admitted``/``run.rejected`` events and the checkpoints' threads, its status from
its last checkpoint (or its ``run.finished`` event), its model from the replies it
logged. What needs the graph itself — approving, resuming, replaying — is refused with
a line that says to continue in Python.

Everything is read only: a home's SQLite files are opened ``mode=ro``, so listing never
creates, migrates or locks anything another process is using.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

from execgraph.nodes.model.call import reply_model
from execgraph.state.home import Home
from execgraph.state.store.rows import EVENT_SELECT, event_from_row

__all__ = [
    "PYTHON_ARCH",
    "PythonRun",
    "Records",
    "SavedState",
    "continue_in_python",
    "home_checkpoint",
    "read_home_state",
    "read_state",
]

PYTHON_ARCH = "? (Python)"
"""What a listing shows as the architecture of a run started from Python."""


@dataclass(frozen=True)
class PythonRun:
    """What the records tell of a run the engine did not start (its graph is unknown)."""

    run_id: str
    created: float
    model: str = "?"
    finished: str | None = None  # the status of its run.finished event, if any
    arch: str = PYTHON_ARCH


@dataclass(frozen=True)
class _Pending:
    id: str
    value: Any


@dataclass(frozen=True)
class SavedState:
    """A read-only snapshot of a checkpoint: values and pending interrupts (shaped as
    LangGraph's ``StateSnapshot`` is read)."""

    values: dict[str, Any]
    interrupts: tuple[Any, ...] = field(default=())
    next: tuple[str, ...] = ()


def _database_errors() -> tuple[type[Exception], ...]:
    """What reading a file or database that holds no tables yet raises."""
    try:
        import psycopg
    except ImportError:  # the postgres extra is not installed: only SQLite is read
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)


class Records:
    """Read-only SQL over where runs are kept: a home's two SQLite files, or one
    PostgreSQL database (``dsn``)."""

    def __init__(self, home: Home, dsn: str | None = None) -> None:
        self.home = home
        self.dsn = dsn

    @contextmanager
    def _connect(self, which: str) -> Iterator[tuple[Any, str, str] | None]:
        """(connection, placeholder, events table), or None when nothing is there yet."""
        if self.dsn is not None:
            import psycopg

            with psycopg.connect(self.dsn) as conn:
                yield conn, "%s", "execgraph_events"
            return
        path = self.home.exec_db if which == "events" else self.home.checkpoints_db
        if not path.is_file():
            yield None
            return
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            yield conn, "?", "events"

    def _one(self, conn: Any, mark: str, table: str, run_id: str, kind: str, last: bool) -> Any:
        row = conn.execute(
            f"SELECT {EVENT_SELECT} FROM {table} WHERE run_id = {mark} AND type = {mark} "
            f"ORDER BY seq {'DESC' if last else 'ASC'} LIMIT 1",
            (run_id, kind),
        ).fetchone()
        return dict(event_from_row(row).payload or {}) if row else {}

    def logged(self, run_id: str | None = None) -> dict[str, PythonRun]:
        """Runs the execution log knows: first event time, the model, a finished status."""
        found: dict[str, PythonRun] = {}
        with self._connect("events") as got:
            if got is None:
                return found
            conn, mark, table = got
            where, args = (f"AND run_id = {mark}", (run_id,)) if run_id else ("", ())
            try:
                starts = conn.execute(
                    f"SELECT run_id, MIN(ts) FROM {table} WHERE type IN ('run.admitted', "
                    f"'run.rejected') {where} GROUP BY run_id",
                    args,
                ).fetchall()
                for rid, ts in starts:
                    first = self._one(conn, mark, table, rid, "model.called", last=False)
                    end = self._one(conn, mark, table, rid, "run.finished", last=True)
                    model = reply_model(first.get("message") or {}) or "?"
                    finished = None if end.get("status") is None else str(end["status"])
                    found[rid] = PythonRun(rid, float(ts), model, finished)
            except _database_errors():  # a file or table not made yet: nothing logged
                return found
        return found

    def threads(self) -> set[str]:
        """The thread ids the checkpoints hold."""
        with self._connect("checkpoints") as got:
            if got is None:
                return set()
            try:
                rows = got[0].execute("SELECT DISTINCT thread_id FROM checkpoints")
                return {str(r[0]) for r in rows}
            except _database_errors():  # no checkpoint table yet
                return set()

    def runs(self, known: set[str]) -> list[PythonRun]:
        """Runs with records but not among ``known`` (those the engine started)."""
        logged = self.logged()
        for thread in self.threads() - set(logged):
            logged[thread] = PythonRun(thread, 0.0)  # checkpoints without a log: no time known
        return sorted(
            (r for rid, r in logged.items() if rid not in known),
            key=lambda r: (r.created, r.run_id),
        )

    def run(self, run_id: str) -> PythonRun | None:
        """``run_id`` if the records hold it, else None."""
        found = self.logged(run_id).get(run_id)
        if found is None and run_id in self.threads():
            found = PythonRun(run_id, 0.0)
        return found


def _reader(saver: Any) -> Any:
    """A graph over the shared state schema that only reads: every architecture keeps the
    same channels, so their values load without knowing which graph wrote them."""
    from langgraph.graph import START, StateGraph

    from execgraph.state.schema import RunState

    builder = StateGraph(RunState)
    builder.add_node("read", lambda state: {})
    builder.add_edge(START, "read")
    return builder.compile(checkpointer=saver)


class _ForeignNodes(logging.Filter):
    """LangGraph warns of pending sends to nodes the reader does not have: it only reads."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "unknown node name" not in record.getMessage()


def read_state(saver: Any, run_id: str) -> SavedState:
    """The run's last checkpoint in ``saver``, read without its graph."""
    config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
    quiet, log = _ForeignNodes(), logging.getLogger("langgraph")
    log.addFilter(quiet)
    try:
        values = dict(_reader(saver).get_state(config).values)
        saved = saver.get_tuple(config)
    finally:
        log.removeFilter(quiet)
    writes = (saved.pending_writes or []) if saved is not None else []
    pending = [
        _Pending(str(getattr(item, "id", "")), getattr(item, "value", item))
        for _, channel, value in writes
        if channel == "__interrupt__"
        for item in (value if isinstance(value, list | tuple) else [value])
    ]
    return SavedState(values, tuple(pending))


def read_home_state(home: Home, run_id: str) -> SavedState:
    """``read_state`` over a home's checkpoints file, opened read-only."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = home.checkpoints_db
    if not path.is_file():
        return SavedState({})
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        try:
            return read_state(SqliteSaver(conn), run_id)
        except sqlite3.Error:
            return SavedState({})


def home_checkpoint(home: Home, config: Any) -> Any:
    """The last checkpoint tuple of ``config``'s thread in a home's file, read-only."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if not home.checkpoints_db.is_file():
        return None
    with closing(sqlite3.connect(f"file:{home.checkpoints_db}?mode=ro", uri=True)) as conn:
        try:
            return SqliteSaver(conn).get_tuple(config)
        except sqlite3.Error:
            return None


def continue_in_python(run_id: str) -> str:
    """How a run the engine cannot rebuild is continued: by the graph that started it."""
    return (
        f"continue it in Python with the graph that started it: app.invoke(Command("
        f'resume=...), {{"configurable": {{"thread_id": "{run_id}"}}}})'
    )
