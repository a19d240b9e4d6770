"""SQLite ExecutionStore: the embedded default, one file, safe for threads and processes.

Durability comes first: WAL with ``synchronous=FULL`` means a record is on disk when
:meth:`SqliteExecutionStore.reserve` returns, so a side effect never starts without it.
Every read-modify-write runs under ``BEGIN IMMEDIATE``, which takes the file's write lock
up front, so several processes sharing the file serialize instead of racing. Inside one
process a single connection is shared by LangGraph's worker threads behind a lock.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import fields
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from state.errors import LockTimeout, StoreError
from state.events import Event
from state.store.base import ExecutionRecord, OutcomeCount, Reservation

__all__ = ["SCHEMA_VERSION", "SqliteExecutionStore"]

#: Layout version kept in ``PRAGMA user_version``; bump it and add a step to migrate.
SCHEMA_VERSION = 2

_BUSY_TIMEOUT_MS = 30_000
_LOCK_POLL_S = (0.005, 0.1)  # first and longest pause between lock attempts

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

_FIELDS = tuple(field.name for field in fields(ExecutionRecord))
_RECORD_COLUMNS = ", ".join(_FIELDS)  # column order = ExecutionRecord field order


def _record(row: tuple[Any, ...]) -> ExecutionRecord:
    values = dict(zip(_FIELDS, row, strict=True))
    values["result"] = None if values["result"] is None else json.loads(values["result"])
    return ExecutionRecord(**values)


_EVENT_COLUMNS = ("event_id", "run_id", "call_id", "type", "schema_version", "ts")
_EVENT_SELECT = ", ".join((*_EVENT_COLUMNS, "payload"))


def _event_row(event: Event) -> tuple[Any, ...]:
    """The events-table row: the columns, then a payload of only what they do not hold.

    An event is written six times a step; repeating its ids and type inside the payload
    made a row ~40% larger. None fields are left out too: they come back on load.
    """
    body = event.model_dump_json(exclude_none=True, exclude=set(_EVENT_COLUMNS))
    return (*(getattr(event, c) for c in _EVENT_COLUMNS), body)


def _event(row: Sequence[Any]) -> Event:
    """An event back from its row (either layout: a whole-event payload reads the same)."""
    *columns, payload = row
    values = json.loads(payload)
    values.update((c, v) for c, v in zip(_EVENT_COLUMNS, columns, strict=True) if v is not None)
    return Event.model_validate(values)


def _poll_locks(try_once: Callable[[], bool], wanted: list[str], timeout_s: float) -> None:
    """Call ``try_once`` with growing pauses until it succeeds or ``timeout_s`` passes."""
    deadline = time.monotonic() + max(timeout_s, 0.0)
    pause = _LOCK_POLL_S[0]
    while not try_once():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LockTimeout(f"locks {', '.join(wanted)} were not granted within {timeout_s:g}s")
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, _LOCK_POLL_S[1])


def artifact_ref(data: bytes) -> str:
    """The content address of ``data`` (same bytes, same ref, in every backend)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


class SqliteExecutionStore:
    """ExecutionStore on one SQLite file (WAL, ``synchronous=FULL``).

    Args:
        path: The database file; parent directories are created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
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
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise StoreError(f"cannot open the execution store at {self.path}") from exc
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _tx(self, what: str, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction, serialized across threads and processes.

        ``durable=False`` commits without an fsync of its own (``synchronous=NORMAL`` in WAL
        mode): the transaction survives a crash of the process at once, and a power loss
        from the next durable commit on, which flushes the log in order.
        """
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError("the execution store is closed")
            if not durable:
                conn.execute("PRAGMA synchronous = NORMAL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    # the original failure is the one worth reporting
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise StoreError(f"the execution store could not {what}") from exc
            finally:
                if not durable:
                    conn.execute("PRAGMA synchronous = FULL")

    def _read(self, what: str, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run a read on the shared connection (autocommit: one consistent statement)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError("the execution store is closed")
            try:
                return fn(conn)
            except sqlite3.Error as exc:
                raise StoreError(f"the execution store could not {what}") from exc

    def _migrate(self) -> None:
        with self._tx("create its tables") as conn:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the execution store at {self.path} has layout version {current}, "
                    f"newer than this execgraph understands ({SCHEMA_VERSION})"
                )
            if current < 1:
                for statement in _SCHEMA_V1.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            if current < 2:
                conn.execute(_SCHEMA_V2)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @staticmethod
    def _get(conn: sqlite3.Connection, key: str) -> ExecutionRecord | None:
        row = conn.execute(
            f"SELECT {_RECORD_COLUMNS} FROM executions WHERE idempotency_key = ?", (key,)
        ).fetchone()
        return None if row is None else _record(row)

    @staticmethod
    def _append(conn: sqlite3.Connection, events: Sequence[Event]) -> list[str]:
        added: list[str] = []
        for event in events:
            cur = conn.execute(
                "INSERT OR IGNORE INTO events "
                "(event_id, run_id, call_id, type, schema_version, ts, payload) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                _event_row(event),
            )
            if cur.rowcount == 1:
                added.append(event.event_id)
        return added

    @staticmethod
    def _release(conn: sqlite3.Connection, keys: Sequence[str], owner: str) -> None:
        conn.executemany(
            "DELETE FROM locks WHERE key = ? AND owner = ?",
            [(key, owner) for key in sorted(set(keys))],
        )

    # -- execution records ------------------------------------------------------------

    def reserve(
        self,
        key: str,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        version: str,
        args_hash: str,
        attempt_id: str,
        durable: bool = True,
    ) -> Reservation:
        """Create a ``started`` record for ``key`` unless one exists; durable on return.

        ``durable=False`` skips the fsync (see :meth:`_tx`): for a call with no side effect,
        whose record guards nothing but is still seen at once by every other process.
        """
        with self._tx("reserve an execution record", durable=durable) as conn:
            existing = self._get(conn, key)
            if existing is not None:
                return Reservation(record=existing, fresh=False)
            now = time.time()
            conn.execute(
                f"INSERT INTO executions ({_RECORD_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 1, 'started', NULL, ?, ?)",
                (key, run_id, call_id, tool, version, args_hash, attempt_id, now, now),
            )
            record = self._get(conn, key)
        assert record is not None
        return Reservation(record=record, fresh=True)

    def restart(self, key: str, attempt_id: str) -> ExecutionRecord:
        """Start a new attempt on an uncommitted record (after reconcile proved no effect).

        Restarting with the attempt id the record already carries changes nothing, so a
        node replayed after a crash does not count the attempt twice.

        Raises:
            StoreError: The key is unknown or already committed.
        """
        with self._tx("restart an execution record") as conn:
            record = self._get(conn, key)
            if record is None:
                raise StoreError(f"no execution record for key {key!r} to restart")
            if record.state == "committed":
                raise StoreError(f"execution record {key!r} is committed; it cannot restart")
            if record.attempt_id == attempt_id:
                return record
            conn.execute(
                "UPDATE executions SET attempt_id = ?, attempts = attempts + 1, updated_at = ? "
                "WHERE idempotency_key = ?",
                (attempt_id, time.time(), key),
            )
            updated = self._get(conn, key)
        assert updated is not None
        return updated

    def get(self, key: str) -> ExecutionRecord | None:
        """The record for ``key``, if any."""
        return self._read("read an execution record", lambda conn: self._get(conn, key))

    def pending(self, run_id: str | None = None) -> list[ExecutionRecord]:
        """Records started but not committed (to reconcile after a crash), oldest first."""
        sql = f"SELECT {_RECORD_COLUMNS} FROM executions WHERE state = 'started'"
        params: tuple[str, ...] = ()
        if run_id is not None:
            sql += " AND run_id = ?"
            params = (run_id,)
        sql += " ORDER BY created_at, rowid"
        return self._read(
            "list pending records",
            lambda conn: [_record(row) for row in conn.execute(sql, params).fetchall()],
        )

    def committed(
        self, run_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[ExecutionRecord]:
        """A run's committed records, oldest first (a page of them with ``offset``/``limit``)."""
        sql = (
            f"SELECT {_RECORD_COLUMNS} FROM executions WHERE state = 'committed' AND run_id = ?"
            " ORDER BY created_at, rowid LIMIT ? OFFSET ?"
        )
        params = (run_id, -1 if limit is None else limit, offset)
        return self._read(
            "list committed records",
            lambda conn: [_record(row) for row in conn.execute(sql, params).fetchall()],
        )

    def outcomes(self, run_id: str) -> list[OutcomeCount]:
        """A run's committed calls counted per tool, outcome and status."""
        sql = (
            "SELECT json_extract(result, '$.tool_name'), json_extract(result, '$.outcome'),"
            " json_extract(result, '$.status'), count(*) FROM executions"
            " WHERE state = 'committed' AND run_id = ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        )
        rows = self._read("count outcomes", lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return [OutcomeCount(t or "", o or "", s or "", int(n)) for t, o, s, n in rows]

    def evidence(self, run_id: str) -> list[dict[str, Any]]:
        """The evidence items of a run's committed results, oldest first."""
        sql = (
            "SELECT json_extract(result, '$.evidence') FROM executions"
            " WHERE state = 'committed' AND run_id = ?"
            " AND json_array_length(result, '$.evidence') > 0 ORDER BY created_at, rowid"
        )
        rows = self._read("read evidence", lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return [item for (items,) in rows for item in json.loads(items)]

    def commit(
        self,
        key: str,
        result: dict[str, Any],
        *,
        events: Sequence[Event] = (),
        release: Sequence[str] = (),
        owner: str = "",
        durable: bool = True,
    ) -> ExecutionRecord:
        """In one transaction: store the result, mark committed, append events, release locks.

        ``durable=False`` does not wait for the flush, for a call that is safe to redo (a
        read): a result lost to a power cut leaves the record started, and it is redone.

        Committing a key that is already committed leaves the record and the event log as
        they are and returns the existing record (the first commit wins); the caller's own
        locks in ``release`` are still released so a duplicate commit cannot leak them.

        Raises:
            StoreError: The key was never reserved, or the result is not JSON.
        """
        try:
            body = json.dumps(result, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"the result for {key!r} is not JSON-serializable") from exc
        with self._tx("commit an execution record", durable=durable) as conn:
            record = self._get(conn, key)
            if record is None:
                raise StoreError(f"no execution record for key {key!r} to commit")
            if record.state != "committed":
                conn.execute(
                    "UPDATE executions SET state = 'committed', result = ?, updated_at = ? "
                    "WHERE idempotency_key = ?",
                    (body, time.time(), key),
                )
                self._append(conn, events)
                record = self._get(conn, key)
            self._release(conn, release, owner)
        assert record is not None
        return record

    # -- locks ----------------------------------------------------------------------

    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        with self._tx("acquire locks") as conn:
            now = time.time()
            for key in keys:
                row = conn.execute(
                    "SELECT owner, lease_until FROM locks WHERE key = ?", (key,)
                ).fetchone()
                if row is not None and row[0] != owner and row[1] > now:
                    return False  # nothing written yet: the transaction commits empty
            conn.executemany(
                "INSERT INTO locks (key, owner, lease_until) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
                "lease_until = excluded.lease_until",
                [(key, owner, now + lease_s) for key in keys],
            )
            return True

    def acquire_locks(
        self, keys: Sequence[str], owner: str, *, lease_s: float, timeout_s: float
    ) -> None:
        """Take every lock in ``keys`` or none; expired leases may be taken over.

        Re-acquiring a lock the owner already holds renews its lease. Keys are taken in
        sorted order in one transaction, so two callers can never each hold half.

        Raises:
            LockTimeout: Some key stayed held by another owner for ``timeout_s``.
        """
        wanted = sorted(set(keys))
        if not wanted:
            return
        _poll_locks(lambda: self._try_acquire(wanted, owner, lease_s), wanted, timeout_s)

    def release_locks(self, keys: Sequence[str], owner: str) -> None:
        """Release the owner's locks (others' locks are untouched)."""
        with self._tx("release locks") as conn:
            self._release(conn, keys, owner)

    # -- events -----------------------------------------------------------------------

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        """Append events, ignoring ids already logged; returns the ids newly appended.

        ``durable=False`` skips the fsync (see :meth:`_tx`), for events whose facts are
        already durable elsewhere (a checkpoint).
        """
        if not events:
            return []
        with self._tx("append events", durable=durable) as conn:
            return self._append(conn, events)

    def events(self, run_id: str, *, call_id: str | None = None) -> list[Event]:
        """A run's events in append order (optionally one call's)."""
        sql = f"SELECT {_EVENT_SELECT} FROM events WHERE run_id = ?"
        params: tuple[str, ...] = (run_id,)
        if call_id is not None:
            sql += " AND call_id = ?"
            params = (run_id, call_id)
        sql += " ORDER BY seq"
        rows = self._read("read events", lambda conn: conn.execute(sql, params).fetchall())
        return [_event(row) for row in rows]

    def has_event(self, run_id: str, type: str) -> bool:
        """Whether the run logged an event of ``type`` (a cancel request, say)."""
        sql = "SELECT 1 FROM events WHERE run_id = ? AND type = ? LIMIT 1"
        row = self._read("read events", lambda conn: conn.execute(sql, (run_id, type)).fetchone())
        return row is not None

    # -- artifacts and approval tokens ------------------------------------------------

    def put_artifact(self, data: bytes, *, kind: str, run_id: str = "") -> str:
        """Store bulky bytes once; returns their content address (``sha256:<hex>``)."""
        ref = artifact_ref(data)
        with self._tx("store an artifact") as conn:
            conn.execute(
                "INSERT OR IGNORE INTO artifacts (ref, kind, run_id, size, data, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ref, kind, run_id, len(data), sqlite3.Binary(data), time.time()),
            )
        return ref

    def get_artifact(self, ref: str) -> bytes:
        """Bytes for a ref.

        Raises:
            KeyError: No artifact has that ref.
        """
        sql = "SELECT data FROM artifacts WHERE ref = ?"
        row = self._read("read an artifact", lambda conn: conn.execute(sql, (ref,)).fetchone())
        if row is None:
            raise KeyError(ref)
        return bytes(row[0])

    def use_approval_token(self, token_id: str) -> bool:
        """Mark a token used; True only the first time (tokens are single-use)."""
        with self._tx("record an approval token") as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO approval_tokens (token_id, used_at) VALUES (?, ?)",
                (token_id, time.time()),
            )
            return cur.rowcount == 1

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection; later calls raise StoreError. Safe to call twice."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> SqliteExecutionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
