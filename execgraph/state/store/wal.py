"""WAL mode for a SQLite file that several processes may open at the same moment.

Both embedded databases of a home (the execution store and the checkpoints) run in WAL
mode, so readers never wait for the writer. Switching a file into WAL mode writes its
header, and SQLite does not wait for that write lock as it waits for others: a connection
that has read the header and then finds another connection writing gets ``database is
locked`` at once, whatever its busy timeout (waiting there could deadlock two upgrading
readers). Several processes opening a new home together meet exactly there.

So :func:`use_wal` reads the mode first (a file already in WAL mode, which every file is
after its first open, needs no change and no lock), and a change that meets another
writer is tried again, with the read done afresh, until the busy timeout has passed.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["use_wal"]

_FIRST_PAUSE_S = 0.001
_LONGEST_PAUSE_S = 0.05


def use_wal(conn: sqlite3.Connection, timeout_s: float) -> str:
    """Put ``conn``'s database in WAL mode, waiting up to ``timeout_s`` for another
    process's lock; return the journal mode the file has now (``"wal"``, or the mode kept
    where WAL is not possible, such as an in-memory database).

    Raises:
        sqlite3.Error: another failure, or the file stayed locked for ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    pause = _FIRST_PAUSE_S
    while True:
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode != "wal":
                mode = str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]).lower()
            return mode
        except sqlite3.OperationalError as exc:
            if not _locked(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, _LONGEST_PAUSE_S)


def _locked(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite said busy or locked (the primary result code, any extended one)."""
    return exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
