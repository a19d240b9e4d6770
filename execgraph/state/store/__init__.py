"""The execution store: durable records, locks, events, artifacts and approval tokens.

:func:`open_store` picks a backend from a URL, so configuration can name a store without
importing a driver: SQLite is the embedded default, PostgreSQL the scale-out backend
(imported only when asked for, since psycopg is an optional extra).
"""

from __future__ import annotations

from pathlib import Path

from execgraph.state.errors import StoreConfigError
from execgraph.state.store.base import (
    Claim,
    ExecutionRecord,
    ExecutionStore,
    RecordState,
    Reservation,
)
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = [
    "Claim",
    "ExecutionRecord",
    "ExecutionStore",
    "RecordState",
    "Reservation",
    "SqliteExecutionStore",
    "open_store",
]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def open_store(url: str | Path) -> ExecutionStore:
    """Open the execution store named by ``url``.

    Args:
        url: ``sqlite:///relative/or/absolute/path.db`` (``sqlite:////abs/path.db`` also
            works), a plain file path, or a ``postgresql://`` DSN.

    Returns:
        A ready store; call ``close()`` when done.

    Raises:
        ImportError: A PostgreSQL URL was given but psycopg is not installed.
        StoreConfigError: The URL names no durable store (in-memory SQLite, another scheme).
        StoreError: The store cannot be opened.
    """
    if isinstance(url, Path):
        return SqliteExecutionStore(url)
    if url.startswith(_POSTGRES_SCHEMES):
        from execgraph.state.store.postgres import PostgresExecutionStore

        dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
        return PostgresExecutionStore(dsn)
    if url.startswith("sqlite://"):
        path = url.removeprefix("sqlite://")
        # sqlite:///x.db -> "/x.db" per SQLAlchemy means relative "x.db"; four slashes
        # mean absolute. Keep that convention so existing URLs mean the same file.
        path = path[1:] if path.startswith("/") else path
        if not path or path == ":memory:":
            raise StoreConfigError(
                "the execution store needs a file; in-memory SQLite is not durable"
            )
        return SqliteExecutionStore(path)
    if "://" in url:
        raise StoreConfigError(f"unsupported execution store URL scheme in {url.split('://')[0]!r}")
    return SqliteExecutionStore(url)
