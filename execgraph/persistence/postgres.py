"""Shared state on PostgreSQL: the execution store and LangGraph's checkpoints on one DSN.

``build_graph(..., database="postgresql://...")`` opens both here, so every worker on
every machine that names the same database sees the same records, events, locks and
checkpoints. The checkpointer is LangGraph's ``PostgresSaver`` over a ``psycopg_pool``
connection pool, serving the async methods from its sync ones on a worker thread, as
:class:`~execgraph.persistence.saver.EmbeddedSqliteSaver` does for SQLite, and for the same
reasons: LangGraph's ``AsyncPostgresSaver`` binds to the event loop running when it is
made (``build_graph`` runs outside any loop, and a script may run several
``asyncio.run``), and its sync methods refuse to run on that loop's thread; the sync
``PostgresSaver`` has no async methods at all. One saver, one pool, the same rows for
``invoke`` and ``ainvoke``.

Migrations run once, safely, from many workers: the execution store makes its tables
under a transaction-level advisory lock (:mod:`execgraph.state.store.postgres`), and
``PostgresSaver.setup()`` (whose migrations include ``CREATE INDEX CONCURRENTLY``, which
two sessions at once cannot both run) under a session-level advisory lock held on a
connection of its own (polled with ``pg_try_advisory_lock``, see :func:`_wait_for_lock`),
so N processes opening a fresh database at once all succeed.

Every failure opening or using it is a :class:`~execgraph.state.errors.StoreError` naming
the database (its name, host and port; never the password).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver

from execgraph.persistence.async_over_sync import AsyncOverSync
from execgraph.state.errors import StoreError
from execgraph.state.store.postgres import PostgresExecutionStore, database_name

try:
    import psycopg
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError('database= needs psycopg: pip install "execgraph[postgres]"') from exc

__all__ = ["SETUP_LOCK", "SharedPostgresSaver", "open_database"]

#: The advisory lock id ``PostgresSaver.setup()`` runs under ("execgckp").
SETUP_LOCK = 0x65786563_67636B70


class SharedPostgresSaver(AsyncOverSync, PostgresSaver):
    """A ``PostgresSaver`` on a pool that also serves LangGraph's async methods, off the
    event loop, and reports its failures as :class:`StoreError` naming the database."""

    def __init__(
        self, pool: ConnectionPool[psycopg.Connection[DictRow]], *, dsn: str, where: str
    ) -> None:
        super().__init__(pool)  # type: ignore[call-arg,unused-ignore]  # without the extra: Any
        self.pool = pool
        self.dsn = dsn
        self.where = where

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[DictRow]]:
        try:
            with super()._cursor(pipeline=pipeline) as cur:
                yield cur
        except psycopg.Error as exc:
            raise StoreError(f"the checkpoint database {self.where} failed: {exc}") from exc

    def setup(self) -> None:
        """``PostgresSaver.setup()`` under a session advisory lock: one migrator at a time."""
        try:
            # a connection of its own: the lock is the session's, setup takes pool ones
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                _wait_for_lock(conn)
                try:
                    super().setup()
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        except psycopg.Error as exc:
            raise StoreError(f"the checkpoint database {self.where} cannot be set up") from exc

    def close(self) -> None:
        """Close the pool (later calls raise StoreError)."""
        self.pool.close()


def _wait_for_lock(conn: psycopg.Connection[Any]) -> None:
    """Take the setup lock, asking again until it is free. Not ``pg_advisory_lock``: a
    session blocked in it keeps a snapshot open, and ``CREATE INDEX CONCURRENTLY`` in the
    holder's setup waits for every older snapshot to end, so holder and waiter would wait
    for each other forever (no deadlock PostgreSQL detects)."""
    pause = 0.005
    while not (conn.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,)).fetchone() or [0])[0]:
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def open_database(
    dsn: str, *, max_connections: int = 10, connect_timeout_s: float = 30.0
) -> tuple[PostgresExecutionStore, SharedPostgresSaver]:
    """The execution store and the checkpointer on ``dsn``, their tables made (once).

    Raises:
        StoreError: the database cannot be reached or set up (named, without password).
    """
    dsn = dsn.replace("postgresql+psycopg://", "postgresql://", 1)
    where = database_name(dsn)
    store = PostgresExecutionStore(
        dsn, max_connections=max_connections, connect_timeout_s=connect_timeout_s
    )
    # PostgresSaver's own connection settings: autocommit, no server-side prepares (a
    # pooler may hand a statement to another session), rows as dicts.
    pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_connections,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        timeout=connect_timeout_s,
        open=False,
        name="execgraph-checkpoints",
    )
    try:
        try:
            pool.open(wait=True, timeout=connect_timeout_s)
        except psycopg.Error as exc:  # PoolTimeout is one
            raise StoreError(f"cannot connect to the checkpoint database {where}") from exc
        saver = SharedPostgresSaver(pool, dsn=dsn, where=where)
        saver.setup()
    except BaseException:
        pool.close()
        store.close()
        raise
    return store, saver
