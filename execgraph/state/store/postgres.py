"""PostgreSQL ExecutionStore: the scale-out backend for many workers on many machines.

Concurrency is the database's job here: ``INSERT ... ON CONFLICT`` makes reservation,
event append, artifact put and token use race-free; an ``UPDATE`` (or ``SELECT ... FOR
UPDATE``) holds one record's row lock, so its commits and restarts serialize; locks are
rows taken in sorted key order in one transaction, with leases measured on the *server*
clock so skewed workers agree on expiry. Deadlocks and serialization failures (which
PostgreSQL resolves by aborting one side) are retried a few times, since each transaction
is self-contained. The statements both backends share live in :mod:`execgraph.state.store.sql`;
this module keeps the pool, the retries, the migrations, the server clock and its own
SQL spelling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from execgraph.state.errors import StoreError
from execgraph.state.store.dialect import Cursor, Dialect
from execgraph.state.store.layout import upgrade_layout
from execgraph.state.store.sql import SqlExecutionStore

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'PostgresExecutionStore needs psycopg: pip install "execgraph[postgres]"'
    ) from exc

__all__ = ["SCHEMA_VERSION", "PostgresExecutionStore", "database_name"]

#: Layout version kept in ``execgraph_schema``; bump it and add a step to migrate.
SCHEMA_VERSION = 4

_T = TypeVar("_T")

_RETRIES = 5
_MIGRATION_LOCK = 0x65786563_67726170  # advisory lock id ("execgrap"): one migrator at a time
# Server clocks: leases compare against the wall clock now, rows are stamped with the
# transaction time (so a new record has created_at == updated_at).
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

# v3: a record in flight is owned by a worker, with a lease and a fencing token, and an
# approval request keeps the one decision that won.
_SCHEMA_V3 = """
ALTER TABLE execgraph_executions ADD COLUMN IF NOT EXISTS owner TEXT NOT NULL DEFAULT '';
ALTER TABLE execgraph_executions
    ADD COLUMN IF NOT EXISTS lease_until DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE execgraph_executions ADD COLUMN IF NOT EXISTS fence INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS execgraph_approval_decisions (
    request_id TEXT PRIMARY KEY,
    decision TEXT NOT NULL,
    decided_at DOUBLE PRECISION NOT NULL
)
"""

# v4: a record keeps the arguments' hash as proposed, before normalization, beside the
# normalized ``args_hash`` (empty in records from before).
_SCHEMA_V4 = """
ALTER TABLE execgraph_executions ADD COLUMN IF NOT EXISTS requested_hash TEXT NOT NULL DEFAULT ''
"""


# A result is kept as JSON text (what a tool returned, whole). jsonb refuses the escape
# ``\u0000`` (a NUL in a tool's text), so the reads that look inside a result parse it with
# that escape spelled as U+FFFD: one NUL in one result must not make every later read of
# its run fail. The stored text keeps the NUL.
_RESULT = r"replace(result, '\u0000', '\ufffd')::jsonb"

_DIALECT = Dialect(
    param="%s",
    prefix="execgraph_",
    lock_row=" FOR UPDATE",
    tiebreak="idempotency_key",
    no_limit=None,  # LIMIT NULL
    result_fields=f"{_RESULT}->>'tool_name', {_RESULT}->>'outcome', {_RESULT}->>'status'",
    evidence=f"({_RESULT}->'evidence')::text",
    has_evidence=(
        f"CASE WHEN jsonb_typeof({_RESULT}->'evidence') = 'array'"
        f" THEN jsonb_array_length({_RESULT}->'evidence') ELSE 0 END > 0"
    ),
)


def database_name(dsn: str) -> str:
    """How an error names the database of ``dsn``: its name, host and port, never the
    password (a DSN libpq cannot parse is named as such)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        return "(an unparsable PostgreSQL DSN)"
    host = str(info.get("host") or "localhost")
    where = f"{host}:{info['port']}" if info.get("port") else host
    return f"{info.get('dbname') or info.get('user') or '(default)'!s} on {where}"


class _Held(Exception):
    """A lock is held by someone else: roll the attempt back and poll again."""


class PostgresExecutionStore(SqlExecutionStore):
    """ExecutionStore on PostgreSQL; tables are prefixed ``execgraph_``.

    Args:
        dsn: A libpq connection string or ``postgresql://`` URL.
        max_connections: Upper bound of the connection pool (one per busy thread).
        connect_timeout_s: How long opening the store may wait for the server.
    """

    _dialect = _DIALECT

    def __init__(
        self, dsn: str, *, max_connections: int = 10, connect_timeout_s: float = 30.0
    ) -> None:
        self._closed = False
        self._where = database_name(dsn)
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
                raise StoreError(
                    f"cannot connect to the PostgreSQL execution store {self._where}"
                ) from exc
            raise

    # -- plumbing -------------------------------------------------------------------

    def _tx(self, what: str, fn: Callable[[Cursor], _T], *, durable: bool = True) -> _T:
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
                    raise StoreError(
                        f"the execution store {self._where} could not {what} (contention)"
                    ) from exc
                time.sleep(0.01 * (attempt + 1))
            except psycopg.Error as exc:
                raise StoreError(f"the execution store {self._where} could not {what}") from exc
        raise AssertionError("unreachable")

    def _read(self, what: str, fn: Callable[[Cursor], _T]) -> _T:
        """A read is a transaction of its own (retried like any other)."""
        return self._tx(what, fn)

    @staticmethod
    def _migrate(cur: Cursor) -> None:
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
        upgrade_layout(cur, current, (_SCHEMA_V1, _SCHEMA_V2, _SCHEMA_V3, _SCHEMA_V4))
        if current < SCHEMA_VERSION:
            cur.execute("DELETE FROM execgraph_schema")
            cur.execute("INSERT INTO execgraph_schema (version) VALUES (%s)", (SCHEMA_VERSION,))

    def _now(self) -> tuple[str, tuple[Any, ...]]:
        """The server's clock at the transaction's start (so workers' clocks never matter)."""
        return _TX_NOW, ()

    # -- locks: one statement decides, so concurrent acquirers need no other lock -----

    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        def run(cur: Cursor) -> None:
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

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool; later calls raise StoreError. Safe to call twice."""
        if not self._closed:
            self._closed = True
            self._pool.close()
