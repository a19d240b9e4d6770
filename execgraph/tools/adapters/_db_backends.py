"""SQLite and PostgreSQL transactions for :mod:`execgraph.tools.adapters.database`.

Private helper: each backend compiles a declared ``:name`` statement for its driver, opens
one connection per call with the read-only mode, deadline and cancellation wired in, and
maps driver failures onto :mod:`execgraph.state.errors` with messages written here (driver text can
carry data values, SQL or connection details, so it never leaves this module).
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import date, datetime
from datetime import time as dtime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any
from uuid import UUID

from execgraph.state.errors import (
    DomainViolation,
    ExecGraphError,
    PermanentError,
    PolicyDenied,
    ResponseLostError,
    TargetNotFound,
    ToolCancelled,
    ToolDeclarationError,
    TransientError,
)
from execgraph.tools.adapters._pg_read_guard import check_read_statement
from execgraph.tools.adapters._pg_read_role import prepare_read_role, switch_to_read_role
from execgraph.tools.adapters._sql_text import Row, Statement, bounded, scan_sql
from execgraph.tools.invocation import InvokeContext

__all__ = ["Backend", "PostgresBackend", "SqliteBackend", "Statement"]

_POSTGRES_HINT = 'pip install "execgraph[postgres]"'


# --------------------------------------------------------------------------- SQLite

_SQLITE_READ_ACTIONS = frozenset(
    (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
     sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_TRANSACTION)
)  # fmt: skip


def _read_only_authorizer(action: int, *_: object) -> int:
    # Third layer after mode=ro and query_only: ATTACH, PRAGMA and temp tables are refused
    # too, so a read tool cannot write anywhere, not even to another file.
    return sqlite3.SQLITE_OK if action in _SQLITE_READ_ACTIONS else sqlite3.SQLITE_DENY


def _sqlite_value(value: Any) -> Any:
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, datetime | date | dtime):
        return value.isoformat()
    if isinstance(value, Decimal | UUID):
        return str(value)
    return value


def _sqlite_error(
    exc: sqlite3.Error, ctx: InvokeContext, tool: str, cell_limit: int | None = None
) -> ExecGraphError:
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    label = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    if primary == sqlite3.SQLITE_TOOBIG and cell_limit is not None:
        return PermanentError(
            f"{tool} reads a value larger than the cell limit of {cell_limit} bytes; nothing "
            "past the limit was loaded (raise DatabaseAdapter(max_cell_bytes=...) if it is "
            "meant to be read)"
        )
    if primary == sqlite3.SQLITE_INTERRUPT:
        if ctx.cancel.is_set():
            return ToolCancelled(f"{tool} was cancelled; nothing was committed")
        return TransientError(f"{tool} exceeded its deadline; nothing was committed")
    if primary in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH):
        return PolicyDenied(f"{tool} runs read-only and may not change the database")
    if primary == sqlite3.SQLITE_CONSTRAINT or isinstance(exc, sqlite3.IntegrityError):
        return PermanentError(f"{tool} violates a database constraint ({label})")
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return TransientError("the database is busy; nothing was committed", retry_after_s=0.5)
    if primary == sqlite3.SQLITE_CANTOPEN:
        return TargetNotFound("the database file does not exist or cannot be opened")
    return PermanentError(f"the database refused {tool} ({label})")


class _SqliteTx:
    def __init__(
        self, conn: sqlite3.Connection, read_only: bool, ctx: InvokeContext, tool: str
    ) -> None:
        self._conn = conn
        self._read_only = read_only
        self._ctx = ctx
        self._tool = tool

    def execute(
        self, stmt: Statement, params: dict[str, Any], budget: int, max_rows: int | None = None
    ) -> tuple[list[Row], bool, int]:
        cur = self._conn.execute(stmt.text, {k: _sqlite_value(v) for k, v in params.items()})
        cols = [d[0] for d in cur.description or ()]
        stream = (dict(zip(cols, raw, strict=True)) for raw in cur)
        if self._read_only:  # lazy: a huge or endless result is never fully read
            rows, truncated = bounded(stream, budget, max_rows)
            return rows, truncated, len(rows)
        returned = list(stream)  # rowcount of INSERT ... RETURNING is final only when drained
        rows, truncated = bounded(returned, budget, max_rows)
        return rows, truncated, max(cur.rowcount, len(returned))

    def commit(self) -> None:
        if self._ctx.cancel.is_set():  # last moment a cancel can still undo everything
            raise ToolCancelled(f"{self._tool} was cancelled; nothing was committed")
        self._conn.execute("COMMIT")


class SqliteBackend:
    """``sqlite:///relative.db`` or ``sqlite:////absolute.db`` (SQLAlchemy's convention)."""

    dialect = "sqlite"

    def __init__(self, url: str, max_cell_bytes: int) -> None:
        if not url.startswith("sqlite:///"):
            raise ToolDeclarationError("sqlite url must look like sqlite:///path/to/file.db")
        raw = url[len("sqlite:///") :].split("?", 1)[0]
        if raw in ("", ":memory:"):
            # Every call opens its own connection, so an in-memory database would be empty.
            raise ToolDeclarationError("in-memory SQLite is not supported; give a file path")
        self._path = Path(raw).absolute()
        self._max_cell_bytes = max_cell_bytes

    def compile(self, sql: str, *, read: bool = False) -> Statement:
        """Validate placeholders; SQLite binds ``:name`` natively.

        A read needs no analysis here: mode=ro, query_only and the authorizer refuse every
        side effect SQLite has (no server, no other connections, no files but ATTACH).
        """
        return scan_sql(sql, self.dialect)

    def reachable(self, timeout_s: float) -> str | None:
        """None when the file opens as a SQLite database (checked at admission)."""
        if not self._path.is_file():
            return "its SQLite file does not exist"
        try:
            conn = sqlite3.connect(f"{self._path.as_uri()}?mode=ro", uri=True, timeout=timeout_s)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            return "its SQLite file cannot be opened as a database"
        return None

    @contextmanager
    def transaction(self, *, read_only: bool, ctx: InvokeContext, tool: str) -> Iterator[_SqliteTx]:
        """mode=ro + query_only + authorizer for reads; BEGIN IMMEDIATE for writes.

        A read also runs under ``SQLITE_LIMIT_LENGTH = max_cell_bytes``: SQLite refuses
        (SQLITE_TOOBIG) to load any longer string or blob, in a result or a filter, so a
        300 MB cell is never copied into memory to be dropped by the output budget later.
        """
        uri = f"{self._path.as_uri()}?mode={'ro' if read_only else 'rw'}"
        remaining = ctx.remaining_s()
        busy_s = 5.0 if remaining is None else min(remaining, 30.0)
        try:
            conn = sqlite3.connect(
                uri, uri=True, timeout=busy_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _sqlite_error(exc, ctx, tool) from None
        deadline = ctx.deadline

        def stop() -> int:
            # Runs every 1000 VM steps: the only way to interrupt SQLite mid-statement.
            return int(ctx.cancel.is_set() or (deadline is not None and time.time() > deadline))

        cell_limit = self._max_cell_bytes if read_only else None
        try:
            conn.set_progress_handler(stop, 1000)
            if read_only:
                conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self._max_cell_bytes)
                conn.execute("PRAGMA query_only = ON")
                conn.set_authorizer(_read_only_authorizer)
            # IMMEDIATE takes the write lock up front: busy surfaces before any work.
            conn.execute("BEGIN" if read_only else "BEGIN IMMEDIATE")
            yield _SqliteTx(conn, read_only, ctx, tool)
        except sqlite3.Error as exc:
            raise _sqlite_error(exc, ctx, tool, cell_limit) from None
        finally:
            conn.close()  # an uncommitted transaction is rolled back


# --------------------------------------------------------------------------- PostgreSQL


class _CancelWatch:
    """Forwards ``ctx.cancel`` to ``connection.cancel()`` while a call runs."""

    def __init__(self, event: threading.Event, cancel: Callable[[], None]) -> None:
        self._done = threading.Event()

        def watch() -> None:
            while not self._done.is_set():
                if event.wait(0.05):
                    if not self._done.is_set():
                        with suppress(Exception):
                            cancel()
                    return

        self._thread = threading.Thread(target=watch, name="execgraph-db-cancel", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


class _PgTx:
    def __init__(self, conn: Any, read_only: bool, ctx: InvokeContext, tool: str) -> None:
        self._conn = conn
        self._read_only = read_only
        self._ctx = ctx
        self._tool = tool
        self.committing = False

    def _check_cancel(self) -> None:
        # conn.cancel() only interrupts a running statement; between statements, look here.
        if self._ctx.cancel.is_set():
            raise ToolCancelled(f"{self._tool} was cancelled; nothing was committed")

    def execute(
        self, stmt: Statement, params: dict[str, Any], budget: int, max_rows: int | None = None
    ) -> tuple[list[Row], bool, int]:
        self._check_cancel()
        with self._conn.cursor() as cur:
            if self._read_only:
                stream = cur.stream(stmt.text, params)
                try:  # row by row: a huge result is never loaded whole
                    rows, truncated = bounded(stream, budget, max_rows)
                finally:
                    stream.close()
                return rows, truncated, len(rows)
            cur.execute(stmt.text, params)
            affected = max(cur.rowcount, 0)
            returned = cur.fetchall() if cur.description else []
            rows, truncated = bounded(returned, budget, max_rows)
            return rows, truncated, affected

    def commit(self) -> None:
        self._check_cancel()
        self.committing = True
        self._conn.commit()
        self.committing = False


def _pg_error(
    exc: Exception, psycopg: Any, ctx: InvokeContext, tool: str, committing: bool
) -> ExecGraphError:
    state = getattr(exc, "sqlstate", None) or ""
    connection_lost = isinstance(exc, psycopg.OperationalError) and (
        not state or state.startswith("08")
    )
    if committing and connection_lost:
        return ResponseLostError(
            f"the connection failed while committing {tool}; the write may or may not have happened"
        )
    if state == "57014":  # query_canceled: our cancel() or statement_timeout
        if ctx.cancel.is_set():
            return ToolCancelled(f"{tool} was cancelled; nothing was committed")
        return TransientError(f"{tool} exceeded its deadline; nothing was committed")
    if state == "25006":  # read_only_sql_transaction
        return PolicyDenied(f"{tool} runs read-only and may not change the database")
    if state in ("42501", "2F003"):  # insufficient privilege; prohibited statement (dblink)
        return PolicyDenied(f"the database role may not run {tool}")
    if state.startswith("23"):
        return PermanentError(f"{tool} violates a database constraint (SQLSTATE {state})")
    if state in ("40001", "40P01", "55P03") or state.startswith(("53", "57P")):
        return TransientError(
            f"{tool} met a conflict or a busy server (SQLSTATE {state}); nothing was committed",
            retry_after_s=0.2,
        )
    if state.startswith("22"):
        return DomainViolation(f"an argument of {tool} is outside what the column accepts")
    if connection_lost:
        return TransientError("the database connection failed; nothing was committed")
    if not state:  # the driver failed, not the server: do not claim the server refused
        return PermanentError(
            f"the database driver could not run or read {tool} ({type(exc).__name__}); "
            "its transaction was rolled back"
        )
    return PermanentError(f"the database refused {tool} (SQLSTATE {state})")


class PostgresBackend:
    """``postgresql://...`` through psycopg 3; one connection per call."""

    dialect = "postgresql"

    def __init__(self, url: str, read_role: str | None = None) -> None:
        try:
            import psycopg
        except ImportError:
            raise ImportError(
                f"the PostgreSQL database adapter needs psycopg: {_POSTGRES_HINT}"
            ) from None
        self._psycopg = psycopg
        self._url = url
        self._configured_role = read_role
        self._read_role: str | None = None
        self._read_role_known = False
        self._role_lock = threading.Lock()

    def compile(self, sql: str, *, read: bool = False) -> Statement:
        """``:name`` → ``%(name)s``, literal ``%`` doubled; a read is analysed first
        (:func:`check_read_statement`: one read statement, no side-effecting calls)."""
        if read:
            check_read_statement(sql)
        return scan_sql(sql, self.dialect)

    def _reader(self, conn: Any) -> str | None:
        """The role read tools switch to, decided on the first read (may create it)."""
        with self._role_lock:
            if not self._read_role_known:
                self._read_role = prepare_read_role(conn, self._configured_role)
                self._read_role_known = True
            return self._read_role

    def reachable(self, timeout_s: float) -> str | None:
        """None when the server accepts a connection and answers (checked at admission)."""
        try:
            with self._psycopg.connect(
                self._url, connect_timeout=max(1, math.ceil(timeout_s)), autocommit=True
            ) as conn:
                conn.execute("SELECT 1").fetchone()
        except self._psycopg.Error:
            return "the PostgreSQL server does not accept a connection"
        return None

    @contextmanager
    def transaction(self, *, read_only: bool, ctx: InvokeContext, tool: str) -> Iterator[_PgTx]:
        """BEGIN [READ ONLY]; statement_timeout from the deadline; cancel → conn.cancel().

        A read also runs as an unprivileged role (:mod:`._pg_read_role`): READ ONLY alone
        leaves a superuser free to write server files or signal other sessions.
        """
        psycopg = self._psycopg
        from psycopg.rows import dict_row

        remaining = ctx.remaining_s()
        try:
            conn = psycopg.connect(
                self._url,
                autocommit=False,
                row_factory=dict_row,
                connect_timeout=max(2, math.ceil(remaining if remaining is not None else 10)),
                application_name="execgraph",
            )
        except psycopg.Error:
            raise TransientError("could not connect to the database") from None
        watch = _CancelWatch(ctx.cancel, conn.cancel)
        tx = _PgTx(conn, read_only, ctx, tool)
        try:
            role = self._reader(conn) if read_only else None
            conn.read_only = read_only  # psycopg then opens with BEGIN READ ONLY
            timeout_ms = 0 if remaining is None else max(1, int(remaining * 1000))
            # Always run this first: it opens the transaction and takes its snapshot, after
            # which PostgreSQL refuses SET TRANSACTION READ WRITE from a read tool's SQL.
            # Standard strings: the read analysis lexes '\' as PostgreSQL's default does.
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true), "
                "set_config('standard_conforming_strings', 'on', true)",
                (str(timeout_ms),),
            )
            if read_only:
                switch_to_read_role(conn, role, tool)
            yield tx
        except psycopg.Error as exc:
            raise _pg_error(exc, psycopg, ctx, tool, tx.committing) from None
        finally:
            watch.stop()
            with suppress(Exception):
                conn.close()  # an uncommitted transaction is rolled back


Backend = SqliteBackend | PostgresBackend
