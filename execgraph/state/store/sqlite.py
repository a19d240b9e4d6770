"""SQLite ExecutionStore: the embedded default, one file, safe for threads and processes.

Durability comes first: WAL with ``synchronous=FULL`` means a record is on disk when
:meth:`SqliteExecutionStore.reserve` returns, so a side effect never starts without it.
Every read-modify-write runs under ``BEGIN IMMEDIATE``, which takes the file's write lock
up front, so several processes sharing the file serialize instead of racing. Inside one
process a single connection is shared by LangGraph's worker threads behind a lock.
The statements both backends share live in :mod:`execgraph.state.store.sql`; this module keeps the
connection, the lock, the durability switch, the migrations and its own SQL spelling.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

from execgraph.state.errors import StoreError
from execgraph.state.home import private_file
from execgraph.state.store.dialect import Cursor, Dialect
from execgraph.state.store.layout import upgrade_layout
from execgraph.state.store.sql import SqlExecutionStore
from execgraph.state.store.wal import use_wal

__all__ = ["SCHEMA_VERSION", "SqliteExecutionStore"]

#: Layout version kept in ``PRAGMA user_version``; bump it and add a step to migrate.
SCHEMA_VERSION = 4

_BUSY_TIMEOUT_MS = 30_000
_MIN_SQLITE = (3, 35)  # RETURNING; ON CONFLICT ... DO NOTHING came in 3.24

_T = TypeVar("_T")

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS executions (
    idempotency_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    version TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    attempt_id TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    state TEXT NOT NULL CHECK (state IN ('started', 'committed')),
    result TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS executions_pending ON executions (state, run_id);
CREATE TABLE IF NOT EXISTS locks (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    lease_until REAL NOT NULL
);
-- payload holds the event's fields the other columns do not (older rows hold the
-- whole event, which reads the same). (No semicolons in comments: split on them.)
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL,
    call_id TEXT,
    type TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    ts REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_run ON events (run_id, call_id, seq);
CREATE TABLE IF NOT EXISTS artifacts (
    ref TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    run_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS approval_tokens (
    token_id TEXT PRIMARY KEY,
    used_at REAL NOT NULL
);
"""

# v2: events by type, so "was this run cancelled?" does not scan the run's whole log.
_SCHEMA_V2 = "CREATE INDEX IF NOT EXISTS events_type ON events (run_id, type)"

# v3: a record in flight is owned by a worker, with a lease and a fencing token, and an
# approval request keeps the one decision that won.
_OWNER_COLUMNS = (
    ("owner", "TEXT NOT NULL DEFAULT ''"),
    ("lease_until", "REAL NOT NULL DEFAULT 0"),
    ("fence", "INTEGER NOT NULL DEFAULT 0"),
)


def _schema_v3(conn: Cursor) -> None:
    """Add the owner columns that are missing (SQLite has no ``ADD COLUMN IF NOT EXISTS``)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(executions)").fetchall()}
    for name, kind in _OWNER_COLUMNS:
        if name not in have:
            conn.execute(f"ALTER TABLE executions ADD COLUMN {name} {kind}")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS approval_decisions (request_id TEXT PRIMARY KEY,"
        " decision TEXT NOT NULL, decided_at REAL NOT NULL)"
    )


# v4: a record keeps the arguments' hash as proposed, before normalization, beside the
# normalized ``args_hash`` (empty in records from before).
_REQUESTED_HASH = ("requested_hash", "TEXT NOT NULL DEFAULT ''")


def _schema_v4(conn: Cursor) -> None:
    """Add the ``requested_hash`` column unless it is there."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(executions)").fetchall()}
    if _REQUESTED_HASH[0] not in have:
        conn.execute("ALTER TABLE executions ADD COLUMN {} {}".format(*_REQUESTED_HASH))


_DIALECT = Dialect(
    param="?",
    prefix="",
    lock_row="",  # BEGIN IMMEDIATE already holds the file's write lock
    tiebreak="rowid",
    no_limit=-1,
    result_fields=(
        "json_extract(result, '$.tool_name'), json_extract(result, '$.outcome'),"
        " json_extract(result, '$.status')"
    ),
    evidence="json_extract(result, '$.evidence')",
    has_evidence="json_array_length(result, '$.evidence') > 0",
)


class SqliteExecutionStore(SqlExecutionStore):
    """ExecutionStore on one SQLite file (WAL, ``synchronous=FULL``).

    Args:
        path: The database file; parent directories are created.
    """

    _dialect = _DIALECT
    # An unflushed commit is lost only to a crash of the host (a process that dies leaves
    # it in the OS's cache), and WAL's shared memory keeps every worker of the file on
    # that host: a run lease lost that way has no holder left to trust it. The next
    # flushed commit (the run's admission, a record) writes it too: the log flushes in order.
    _flush_run_lease = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._flushes = True  # the connection's synchronous setting: FULL, or NORMAL
        if sqlite3.sqlite_version_info < _MIN_SQLITE:
            raise StoreError(
                f"the execution store needs SQLite {'.'.join(map(str, _MIN_SQLITE))} or newer; "
                f"this Python links SQLite {sqlite3.sqlite_version}"
            )
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            private_file(self.path)  # 0600, and so its WAL and shared memory
            # isolation_level=None: no implicit transactions; we issue BEGIN IMMEDIATE
            # ourselves so a read-modify-write holds the write lock from its first read.
            conn = sqlite3.connect(
                str(self.path),
                timeout=_BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            self._conn = conn
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            use_wal(conn, _BUSY_TIMEOUT_MS / 1000)
            conn.execute("PRAGMA synchronous = FULL")
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise StoreError(f"cannot open the execution store at {self.path}") from exc
        try:
            self._tx("create its tables", self._migrate)
        except BaseException:
            self.close()
            raise

    # -- plumbing -------------------------------------------------------------------

    def _tx(self, what: str, fn: Callable[[Cursor], _T], *, durable: bool = True) -> _T:
        """Run ``fn`` in one write transaction, serialized across threads and processes.

        ``durable=False`` commits without an fsync of its own (``synchronous=NORMAL`` in WAL
        mode): the transaction survives a crash of the process at once, and a power loss
        from the next durable commit on, which flushes the log in order. The setting is
        changed only when it differs from the last transaction's, so a run of reads'
        commits pays no PRAGMA.
        """
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError("the execution store is closed")
            try:
                if durable != self._flushes:
                    conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
                    self._flushes = durable
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return result
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    # the original failure is the one worth reporting
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise StoreError(f"the execution store could not {what}") from exc

    def _read(self, what: str, fn: Callable[[Cursor], _T]) -> _T:
        """Run a read on the shared connection (autocommit: one consistent statement)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError("the execution store is closed")
            try:
                return fn(conn)
            except sqlite3.Error as exc:
                raise StoreError(f"the execution store could not {what}") from exc

    def _migrate(self, conn: Cursor) -> None:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the execution store at {self.path} has layout version {current}, "
                f"newer than this execgraph understands ({SCHEMA_VERSION})"
            )
        upgrade_layout(conn, current, (_SCHEMA_V1, _SCHEMA_V2, _schema_v3, _schema_v4))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _now(self) -> tuple[str, tuple[Any, ...]]:
        """This process's clock, as a parameter."""
        return "?", (time.time(),)

    def clock(self) -> float:
        """The store's time now: this machine's clock, which every process of an embedded
        home shares, read without a round trip through the connection and its lock."""
        return time.time()

    # -- locks: under the write lock, a read decides and a write follows --------------

    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        def run(conn: Cursor) -> bool:
            now = time.time()
            for key in keys:
                row = conn.execute(
                    "SELECT owner, lease_until FROM locks WHERE key = ?", (key,)
                ).fetchone()
                if row is not None and row[0] != owner and row[1] > now:
                    return False  # nothing written yet: the transaction commits empty
            for key in keys:
                conn.execute(
                    "INSERT INTO locks (key, owner, lease_until) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
                    "lease_until = excluded.lease_until",
                    (key, owner, now + lease_s),
                )
            return True

        return self._tx("acquire locks", run)

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection; later calls raise StoreError. Safe to call twice."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
