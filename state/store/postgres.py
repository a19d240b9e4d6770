"""PostgreSQL ExecutionStore: the scale-out backend for many workers on many machines.

Concurrency is the database's job here: ``INSERT ... ON CONFLICT`` makes reservation,
event append, artifact put and token use race-free; ``SELECT ... FOR UPDATE`` serializes
commits and restarts of one record; locks are rows taken in sorted key order in one
transaction, with leases measured on the *server* clock so skewed workers agree on expiry.
Deadlocks and serialization failures (which PostgreSQL resolves by aborting one side) are
retried a few times, since each transaction is self-contained.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from state.errors import StoreError
from state.events import Event
from state.store.base import ExecutionRecord, OutcomeCount, Reservation
from state.store.sqlite import (
    _EVENT_SELECT,
    _RECORD_COLUMNS,
    _event,
    _event_row,
    _poll_locks,
    _record,
    artifact_ref,
)

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'PostgresExecutionStore needs psycopg: pip install "execgraph[postgres]"'
    ) from exc

__all__ = ["SCHEMA_VERSION", "PostgresExecutionStore"]

#: Layout version kept in ``execgraph_schema``; bump it and add a step to migrate.
SCHEMA_VERSION = 2

_T = TypeVar("_T")
_Cursor = psycopg.Cursor[tuple[Any, ...]]

_RETRIES = 5
_MIGRATION_LOCK = 0x65786563_67726170  # advisory lock id ("execgrap"): one migrator at a time
# Server clocks: leases compare against the wall clock now, records use the transaction time
# (so a new record has created_at == updated_at).
_NOW = "extract(epoch from clock_timestamp())::double precision"
_TX_NOW = "extract(epoch from now())::double precision"

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS execgraph_executions (
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
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS execgraph_executions_pending
    ON execgraph_executions (run_id, created_at) WHERE state = 'started';
CREATE TABLE IF NOT EXISTS execgraph_locks (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    lease_until DOUBLE PRECISION NOT NULL
);
-- payload holds the event's fields the other columns do not (older rows hold the whole
-- event), as text: JSONB would reject a NUL character some tool output may carry.
CREATE TABLE IF NOT EXISTS execgraph_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL,
    call_id TEXT,
    type TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    ts DOUBLE PRECISION NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS execgraph_events_run ON execgraph_events (run_id, call_id, seq);
CREATE TABLE IF NOT EXISTS execgraph_artifacts (
    ref TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    run_id TEXT NOT NULL,
    size BIGINT NOT NULL,
    data BYTEA NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS execgraph_approval_tokens (
    token_id TEXT PRIMARY KEY,
    used_at DOUBLE PRECISION NOT NULL
)
"""

# v2: events by type, so "was this run cancelled?" does not scan the run's whole log.
_SCHEMA_V2 = "CREATE INDEX IF NOT EXISTS execgraph_events_type ON execgraph_events (run_id, type)"


class _Held(Exception):
    """A lock is held by someone else: roll the attempt back and poll again."""


class PostgresExecutionStore:
    """ExecutionStore on PostgreSQL; tables are prefixed ``execgraph_``.

    Args:
        dsn: A libpq connection string or ``postgresql://`` URL.
        max_connections: Upper bound of the connection pool (one per busy thread).
        connect_timeout_s: How long opening the store may wait for the server.
    """

    def __init__(
        self, dsn: str, *, max_connections: int = 10, connect_timeout_s: float = 30.0
    ) -> None:
        self._closed = False
        # autocommit connections: every operation opens its own explicit transaction.
        self._pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,
            timeout=connect_timeout_s,
            open=False,
            name="execgraph-store",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
            self._tx("create its tables", self._migrate)
        except BaseException as exc:
            self.close()
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, psycopg.Error):
                # never the DSN in the message: it may carry a password
                raise StoreError("cannot connect to the PostgreSQL execution store") from exc
            raise

    # -- plumbing -------------------------------------------------------------------

    def _tx(self, what: str, fn: Callable[[_Cursor], _T], *, durable: bool = True) -> _T:
        """Run ``fn`` in one transaction, retrying when PostgreSQL aborts it to resolve a race.

        ``durable=False`` commits without waiting for the WAL flush (``synchronous_commit =
        off`` for this transaction only): visible at once, durable from the next flush.
        """
        if self._closed:
            raise StoreError("the execution store is closed")
        for attempt in range(_RETRIES):
            try:
                with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    if not durable:
                        cur.execute("SET LOCAL synchronous_commit TO off")
                    return fn(cur)
            except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
                if attempt == _RETRIES - 1:
                    raise StoreError(f"the execution store could not {what} (contention)") from exc
                time.sleep(0.01 * (attempt + 1))
            except psycopg.Error as exc:
                raise StoreError(f"the execution store could not {what}") from exc
        raise AssertionError("unreachable")

    @staticmethod
    def _migrate(cur: _Cursor) -> None:
        # Many workers may start at once; CREATE ... IF NOT EXISTS alone still races.
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        cur.execute("CREATE TABLE IF NOT EXISTS execgraph_schema (version INTEGER NOT NULL)")
        row = cur.execute("SELECT max(version) FROM execgraph_schema").fetchone()
        current = 0 if row is None or row[0] is None else int(row[0])
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the execution store has layout version {current}, newer than this "
                f"execgraph understands ({SCHEMA_VERSION})"
            )
        if current < 1:
            for statement in _SCHEMA_V1.split(";"):
                if statement.strip():
                    cur.execute(statement)
        if current < 2:
            cur.execute(_SCHEMA_V2)
        if current < SCHEMA_VERSION:
            cur.execute("DELETE FROM execgraph_schema")
            cur.execute("INSERT INTO execgraph_schema (version) VALUES (%s)", (SCHEMA_VERSION,))

    @staticmethod
    def _get(cur: _Cursor, key: str, *, for_update: bool = False) -> ExecutionRecord | None:
        sql = f"SELECT {_RECORD_COLUMNS} FROM execgraph_executions WHERE idempotency_key = %s"
        row = cur.execute(sql + (" FOR UPDATE" if for_update else ""), (key,)).fetchone()
        return None if row is None else _record(row)

    @staticmethod
    def _append(cur: _Cursor, events: Sequence[Event]) -> list[str]:
        added: list[str] = []
        for event in events:
            row = cur.execute(
                "INSERT INTO execgraph_events "
                "(event_id, run_id, call_id, type, schema_version, ts, payload) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
                _event_row(event),
            ).fetchone()
            if row is not None:
                added.append(event.event_id)
        return added

    @staticmethod
    def _release(cur: _Cursor, keys: Sequence[str], owner: str) -> None:
        # One key at a time in sorted order: the order acquirers lock in, so no deadlock.
        for key in sorted(set(keys)):
            cur.execute("DELETE FROM execgraph_locks WHERE key = %s AND owner = %s", (key, owner))

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

        ``durable=False`` does not wait for the flush (see :meth:`_tx`): for a call with no
        side effect, whose record guards nothing but is still seen at once by every worker.
        """

        def run(cur: _Cursor) -> Reservation:
            # ON CONFLICT waits for a concurrent inserter to finish, then yields to it.
            row = cur.execute(
                f"INSERT INTO execgraph_executions ({_RECORD_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, 1, 'started', NULL, "
                f"{_TX_NOW}, {_TX_NOW}) "
                f"ON CONFLICT (idempotency_key) DO NOTHING RETURNING {_RECORD_COLUMNS}",
                (key, run_id, call_id, tool, version, args_hash, attempt_id),
            ).fetchone()
            if row is not None:
                return Reservation(record=_record(row), fresh=True)
            existing = self._get(cur, key)
            if existing is None:  # deleted in between: not something execgraph does
                raise StoreError(f"execution record {key!r} vanished during reserve")
            return Reservation(record=existing, fresh=False)

        return self._tx("reserve an execution record", run, durable=durable)

    def restart(self, key: str, attempt_id: str) -> ExecutionRecord:
        """Start a new attempt on an uncommitted record (after reconcile proved no effect).

        Restarting with the attempt id the record already carries changes nothing, so a
        node replayed after a crash does not count the attempt twice.

        Raises:
            StoreError: The key is unknown or already committed.
        """

        def run(cur: _Cursor) -> ExecutionRecord:
            record = self._get(cur, key, for_update=True)
            if record is None:
                raise StoreError(f"no execution record for key {key!r} to restart")
            if record.state == "committed":
                raise StoreError(f"execution record {key!r} is committed; it cannot restart")
            if record.attempt_id == attempt_id:
                return record
            row = cur.execute(
                "UPDATE execgraph_executions SET attempt_id = %s, attempts = attempts + 1, "
                f"updated_at = {_TX_NOW} WHERE idempotency_key = %s RETURNING {_RECORD_COLUMNS}",
                (attempt_id, key),
            ).fetchone()
            assert row is not None
            return _record(row)

        return self._tx("restart an execution record", run)

    def get(self, key: str) -> ExecutionRecord | None:
        """The record for ``key``, if any."""
        return self._tx("read an execution record", lambda cur: self._get(cur, key))

    def pending(self, run_id: str | None = None) -> list[ExecutionRecord]:
        """Records started but not committed (to reconcile after a crash), oldest first."""
        sql = f"SELECT {_RECORD_COLUMNS} FROM execgraph_executions WHERE state = 'started'"
        params: tuple[str, ...] = ()
        if run_id is not None:
            sql += " AND run_id = %s"
            params = (run_id,)
        sql += " ORDER BY created_at, idempotency_key"
        return self._tx(
            "list pending records",
            lambda cur: [_record(row) for row in cur.execute(sql, params).fetchall()],
        )

    def committed(
        self, run_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[ExecutionRecord]:
        """A run's committed records, oldest first (a page of them with ``offset``/``limit``)."""
        sql = (
            f"SELECT {_RECORD_COLUMNS} FROM execgraph_executions"
            " WHERE state = 'committed' AND run_id = %s"
            " ORDER BY created_at, idempotency_key LIMIT %s OFFSET %s"
        )
        params = (run_id, limit, offset)
        return self._tx(
            "list committed records",
            lambda cur: [_record(row) for row in cur.execute(sql, params).fetchall()],
        )

    def outcomes(self, run_id: str) -> list[OutcomeCount]:
        """A run's committed calls counted per tool, outcome and status."""
        sql = (
            "SELECT result::jsonb->>'tool_name', result::jsonb->>'outcome',"
            " result::jsonb->>'status', count(*) FROM execgraph_executions"
            " WHERE state = 'committed' AND run_id = %s GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        )
        rows = self._tx("count outcomes", lambda cur: cur.execute(sql, (run_id,)).fetchall())
        return [OutcomeCount(t or "", o or "", s or "", int(n)) for t, o, s, n in rows]

    def evidence(self, run_id: str) -> list[dict[str, Any]]:
        """The evidence items of a run's committed results, oldest first."""
        sql = (
            "SELECT result::jsonb->'evidence' FROM execgraph_executions"
            " WHERE state = 'committed' AND run_id = %s"
            " AND CASE WHEN jsonb_typeof(result::jsonb->'evidence') = 'array'"
            " THEN jsonb_array_length(result::jsonb->'evidence') ELSE 0 END > 0"
            " ORDER BY created_at, idempotency_key"
        )
        rows = self._tx("read evidence", lambda cur: cur.execute(sql, (run_id,)).fetchall())
        return [item for (items,) in rows for item in items]

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

        def run(cur: _Cursor) -> ExecutionRecord:
            record = self._get(cur, key, for_update=True)
            if record is None:
                raise StoreError(f"no execution record for key {key!r} to commit")
            if record.state != "committed":
                row = cur.execute(
                    "UPDATE execgraph_executions SET state = 'committed', result = %s, "
                    f"updated_at = {_TX_NOW} WHERE idempotency_key = %s "
                    f"RETURNING {_RECORD_COLUMNS}",
                    (body, key),
                ).fetchone()
                assert row is not None
                record = _record(row)
                self._append(cur, events)
            self._release(cur, release, owner)
            return record

        return self._tx("commit an execution record", run, durable=durable)

    # -- locks ----------------------------------------------------------------------

    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        def run(cur: _Cursor) -> None:
            for key in keys:  # sorted: every acquirer locks rows in the same order
                row = cur.execute(
                    "INSERT INTO execgraph_locks (key, owner, lease_until) "
                    f"VALUES (%s, %s, {_NOW} + %s) "
                    "ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, "
                    "lease_until = EXCLUDED.lease_until "
                    "WHERE execgraph_locks.owner = EXCLUDED.owner "
                    f"OR execgraph_locks.lease_until <= {_NOW} RETURNING key",
                    (key, owner, float(lease_s)),
                ).fetchone()
                if row is None:
                    raise _Held  # rolls back every key taken so far: all or nothing

        try:
            self._tx("acquire locks", run)
        except _Held:
            return False
        return True

    def acquire_locks(
        self, keys: Sequence[str], owner: str, *, lease_s: float, timeout_s: float
    ) -> None:
        """Take every lock in ``keys`` or none; expired leases may be taken over.

        Re-acquiring a lock the owner already holds renews its lease.

        Raises:
            LockTimeout: Some key stayed held by another owner for ``timeout_s``.
        """
        wanted = sorted(set(keys))
        if not wanted:
            return
        _poll_locks(lambda: self._try_acquire(wanted, owner, lease_s), wanted, timeout_s)

    def release_locks(self, keys: Sequence[str], owner: str) -> None:
        """Release the owner's locks (others' locks are untouched)."""
        self._tx("release locks", lambda cur: self._release(cur, keys, owner))

    # -- events -----------------------------------------------------------------------

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        """Append events, ignoring ids already logged; returns the ids newly appended.

        ``durable=False`` does not wait for the flush (see :meth:`_tx`), for events whose
        facts are already durable elsewhere (a checkpoint).
        """
        if not events:
            return []
        return self._tx("append events", lambda cur: self._append(cur, events), durable=durable)

    def events(self, run_id: str, *, call_id: str | None = None) -> list[Event]:
        """A run's events in append order (optionally one call's)."""
        sql = f"SELECT {_EVENT_SELECT} FROM execgraph_events WHERE run_id = %s"
        params: tuple[str, ...] = (run_id,)
        if call_id is not None:
            sql += " AND call_id = %s"
            params = (run_id, call_id)
        sql += " ORDER BY seq"
        rows = self._tx("read events", lambda cur: cur.execute(sql, params).fetchall())
        return [_event(row) for row in rows]

    def has_event(self, run_id: str, type: str) -> bool:
        """Whether the run logged an event of ``type`` (a cancel request, say)."""
        sql = "SELECT 1 FROM execgraph_events WHERE run_id = %s AND type = %s LIMIT 1"
        row = self._tx("read events", lambda cur: cur.execute(sql, (run_id, type)).fetchone())
        return row is not None

    # -- artifacts and approval tokens ------------------------------------------------

    def put_artifact(self, data: bytes, *, kind: str, run_id: str = "") -> str:
        """Store bulky bytes once; returns their content address (``sha256:<hex>``)."""
        ref = artifact_ref(data)
        self._tx(
            "store an artifact",
            lambda cur: cur.execute(
                "INSERT INTO execgraph_artifacts (ref, kind, run_id, size, data, created_at) "
                f"VALUES (%s, %s, %s, %s, %s, {_TX_NOW}) ON CONFLICT (ref) DO NOTHING",
                (ref, kind, run_id, len(data), data),
            ),
        )
        return ref

    def get_artifact(self, ref: str) -> bytes:
        """Bytes for a ref.

        Raises:
            KeyError: No artifact has that ref.
        """
        sql = "SELECT data FROM execgraph_artifacts WHERE ref = %s"
        row = self._tx("read an artifact", lambda cur: cur.execute(sql, (ref,)).fetchone())
        if row is None:
            raise KeyError(ref)
        return bytes(row[0])

    def use_approval_token(self, token_id: str) -> bool:
        """Mark a token used; True only the first time (tokens are single-use)."""
        sql = (
            f"INSERT INTO execgraph_approval_tokens (token_id, used_at) VALUES (%s, {_NOW}) "
            "ON CONFLICT (token_id) DO NOTHING"
        )
        return self._tx(
            "record an approval token", lambda cur: cur.execute(sql, (token_id,)).rowcount == 1
        )

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool; later calls raise StoreError. Safe to call twice."""
        if not self._closed:
            self._closed = True
            self._pool.close()

    def __enter__(self) -> PostgresExecutionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
