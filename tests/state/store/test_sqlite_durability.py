"""SQLite durability: what a process wrote survives that process dying without cleanup.

The child process exits with ``os._exit(1)`` (no close, no atexit, no flush of Python
buffers), as a crash would; a new store instance must still see the record as pending.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import LockTimeout, StoreError
from execgraph.state.events import EventType, make_event
from execgraph.state.store import SqliteExecutionStore, open_store
from execgraph.state.store.sqlite import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[3]

_CRASHER = """
import os, sys
from execgraph.state.events import EventType, make_event
from execgraph.state.store import SqliteExecutionStore
store = SqliteExecutionStore(sys.argv[1])
store.reserve("k-crash", run_id="run-1", call_id="c1", tool="write_note", version="1.0.0",
              args_hash="h", attempt_id="att-1")
store.reserve("k-done", run_id="run-1", call_id="c2", tool="write_note", version="1.0.0",
              args_hash="h", attempt_id="att-1")
store.commit("k-done", {"ok": True},
             events=[make_event(EventType.TOOL_COMPLETED, "run-1", call_id="c2")])
store.acquire_locks(["file:notes.txt"], "dead-worker", lease_s=3600, timeout_s=0)
os._exit(1)
"""


def _crash(db: Path, script: str = _CRASHER) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", script, str(db)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr


@pytest.mark.integration
def test_reserved_record_survives_a_crashed_process(tmp_path: Path) -> None:
    db = tmp_path / "execgraph.db"
    _crash(db)
    with SqliteExecutionStore(db) as store:
        pending = store.pending()
        assert [r.idempotency_key for r in pending] == ["k-crash"]
        assert pending[0].state == "started" and pending[0].attempt_id == "att-1"
        done = store.get("k-done")
        assert done is not None and done.result == {"ok": True}
        assert [e.call_id for e in store.events("run-1")] == ["c2"]
        # The dead worker's lease outlives it; only expiry (or its owner) frees the lock.
        with pytest.raises(LockTimeout):
            store.acquire_locks(["file:notes.txt"], "new-worker", lease_s=60, timeout_s=0)


def test_file_uses_wal_full_sync_and_a_layout_version(tmp_path: Path) -> None:
    db = tmp_path / "execgraph.db"
    open_store(str(db)).close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
    store = SqliteExecutionStore(db)
    try:
        assert store._conn is not None
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()


def test_each_transaction_commits_at_the_sync_level_it_asked_for(tmp_path: Path) -> None:
    """The setting changes lazily, only between transactions that want different ones."""
    store = SqliteExecutionStore(tmp_path / "execgraph.db")

    def level(cur: Any) -> int:
        return int(cur.execute("PRAGMA synchronous").fetchone()[0])

    try:
        asked = [True, False, False, True, True, False, True]
        seen = [store._tx("read the level", level, durable=durable) for durable in asked]
        assert seen == [2 if durable else 1 for durable in asked]  # FULL = 2, NORMAL = 1
    finally:
        store.close()


def test_a_version_1_store_is_migrated_in_place(tmp_path: Path) -> None:
    db = tmp_path / "execgraph.db"
    store = SqliteExecutionStore(db)
    store.append_events([make_event(EventType.RUN_ADMITTED, "run-1")])
    store.close()
    conn = sqlite3.connect(db)
    conn.execute("DROP INDEX events_type")  # the layout a version-1 execgraph left
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()

    reopened = SqliteExecutionStore(db)
    try:
        assert reopened.has_event("run-1", EventType.RUN_ADMITTED)  # nothing lost
    finally:
        reopened.close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT 1 FROM events WHERE run_id = 'r' AND type = 't'"
        ).fetchall()
        assert "events_type" in str(plan)
    finally:
        conn.close()


def test_newer_layout_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "execgraph.db"
    open_store(f"sqlite:///{db}").close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        SqliteExecutionStore(db)


def test_unusable_path_is_a_store_error_without_sqlite_text(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        SqliteExecutionStore(tmp_path)  # a directory, not a file
    assert "sqlite" not in info.value.message.lower()


def test_open_store_urls(tmp_path: Path) -> None:
    absolute = tmp_path / "a" / "x.db"
    for url in (f"sqlite:///{absolute}", str(absolute), absolute):
        store = open_store(url)
        assert isinstance(store, SqliteExecutionStore) and store.path == absolute
        store.close()
    with pytest.raises(ValueError):
        open_store("sqlite://:memory:")
    with pytest.raises(ValueError):
        open_store("mysql://host/db")


def test_a_sqlite_too_old_for_its_statements_is_refused_with_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 31, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.31.1")
    with pytest.raises(StoreError, match=r"needs SQLite 3\.35 or newer.*links SQLite 3\.31\.1"):
        SqliteExecutionStore(tmp_path / "execgraph.db")
    assert not (tmp_path / "execgraph.db").exists()  # refused before touching the disk


_LEASE_CRASHER = """
import os, sys
from execgraph.state.store import SqliteExecutionStore
store = SqliteExecutionStore(sys.argv[1])
assert store.lease_run("run-1", "dead-worker", lease_s=3600).owner == "dead-worker"
os._exit(1)
"""


@pytest.mark.integration
def test_a_run_lease_taken_unflushed_outlives_the_process_that_took_it(tmp_path: Path) -> None:
    # Taking a run lease waits for no flush of its own (only a crash of the host loses it,
    # with every worker of the file): a process that dies still leaves it held.
    db = tmp_path / "execgraph.db"
    _crash(db, _LEASE_CRASHER)
    with SqliteExecutionStore(db) as store:
        assert store.lease_run_holder("run-1") == "dead-worker"
        assert store.lease_run("run-1", "new-worker", lease_s=60).owner == "dead-worker"
