"""The benchmark's size measure counts data, not the size a write-ahead log grew to."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.workload import db_bytes


def test_db_bytes_checkpoints_the_log_before_counting(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "checkpoints.db")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (b BLOB)")
    for _ in range(64):
        conn.execute("INSERT INTO t VALUES (randomblob(32768))")
        conn.execute("DELETE FROM t")  # the data stays small; the log does not
        conn.commit()
    wal = tmp_path / "checkpoints.db-wal"
    assert wal.stat().st_size > 1_000_000
    counted = db_bytes(tmp_path)  # the writer's connection is still open, as in a run
    assert wal.stat().st_size == 0
    assert counted < 200_000
    conn.close()
