"""What the SQL backends spell differently when they say the same thing, and run it on.

The shared store (:mod:`execgraph.state.store.sql`) writes each common statement once and asks a
:class:`Dialect` for the words that differ: the driver's placeholder, the table names,
insert-if-absent, row locks, and JSON access to a stored result. Each backend module holds
its own instance next to its schema, so both can be read side by side. A statement runs
on a :class:`Cursor`, the part of sqlite3's and psycopg's interfaces both drivers share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Cursor", "Dialect", "Rows"]


class Rows(Protocol):
    """What a statement hands back in either driver (a sqlite3 or psycopg cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Cursor(Protocol):
    """Where a transaction runs its statements: a sqlite3 connection, a psycopg cursor."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows: ...


@dataclass(frozen=True)
class Dialect:
    """One backend's spelling of the statements the shared store runs."""

    #: The driver's parameter placeholder: ``?`` (sqlite3) or ``%s`` (psycopg).
    param: str
    #: Put before every table name (a PostgreSQL schema is shared with other programs).
    prefix: str
    #: Appended to the first read of a read-modify-write to lock the row (empty where
    #: the transaction holds the whole store's write lock from the start).
    lock_row: str
    #: Orders records created in the same instant (SQLite's rowid is insertion order).
    tiebreak: str
    #: The ``LIMIT`` that means no limit.
    no_limit: int | None
    #: A stored result's ``tool_name``, ``outcome`` and ``status`` as three text columns.
    result_fields: str
    #: A stored result's ``evidence`` list, as JSON text.
    evidence: str
    #: True where that list has items (false where it is missing or not a list).
    has_evidence: str

    def table(self, name: str) -> str:
        """The backend's name for the shared table ``name`` (``events``, ``locks``, ...)."""
        return self.prefix + name

    def params(self, count: int) -> str:
        """``count`` placeholders, comma-separated (a ``VALUES`` list)."""
        return ", ".join([self.param] * count)

    def insert_ignore(
        self, table: str, columns: str, values: str, *, key: str, rows: int = 1
    ) -> str:
        """An INSERT of ``rows`` rows of ``values`` that skips a row whose ``key`` exists.

        ``ON CONFLICT (key)`` in both backends, not SQLite's ``OR IGNORE``, which would
        also skip a row that breaks any other constraint, silently.
        """
        listed = ", ".join([f"({values})"] * rows)
        return f"INSERT INTO {table} ({columns}) VALUES {listed} ON CONFLICT ({key}) DO NOTHING"
