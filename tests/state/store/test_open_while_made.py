"""Opening a database file another connection is making waits for it instead of failing.

A new file is switched into WAL mode by whichever connection opens it first; a second
connection reading the file meanwhile cannot take the write lock the switch needs, and
SQLite refuses it at once (``database is locked``) rather than waiting. Here the other
connection holds that lock on a new file for a moment, as another process starting on the
same home would; the execution store and the checkpointer must open once it is free.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.persistence.saver import open_embedded_saver
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.state.store.wal import use_wal

_HOLD_S = 0.3


def _open_store(path: Path) -> Any:
    store = SqliteExecutionStore(path)
    store.close()


def _open_saver(path: Path) -> Any:
    open_embedded_saver(path).conn.close()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A new database file whose write lock another connection holds for a moment."""
    path = tmp_path / "home" / "new.db"
    path.parent.mkdir()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(_HOLD_S, holder.execute, ("COMMIT",))
    release.start()
    yield path
    release.join()
    holder.close()


@pytest.mark.parametrize("opener", [_open_store, _open_saver], ids=["store", "checkpointer"])
def test_a_file_being_made_by_another_connection_is_waited_for(
    held: Path, opener: Callable[[Path], Any]
) -> None:
    started = time.monotonic()
    opener(held)
    assert time.monotonic() - started >= _HOLD_S * 0.5  # it waited for the lock...
    with sqlite3.connect(held) as conn:  # ...and left the file in WAL mode
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_already_in_wal_mode_is_not_switched_again(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    with sqlite3.connect(path) as first:
        assert use_wal(first, 1.0) == "wal"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE t (x)")
    try:
        started = time.monotonic()
        assert use_wal(sqlite3.connect(path, timeout=0), 5.0) == "wal"
        assert time.monotonic() - started < 1.0  # no lock taken, none waited for
    finally:
        writer.execute("COMMIT")
        writer.close()


def test_a_lock_held_past_the_timeout_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            use_wal(sqlite3.connect(path, timeout=0), 0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
