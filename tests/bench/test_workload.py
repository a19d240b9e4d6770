"""The benchmark's workload: its size measure counts data, not the size a write-ahead log
grew to, and a timed run ends durable in the durability each framework runs in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from bench.workload import EXECGRAPH, EXECGRAPH_SYNC, config, db_bytes, durability, run_steps


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


@pytest.mark.parametrize("framework", [EXECGRAPH, EXECGRAPH_SYNC])
def test_a_timed_execgraph_run_ends_with_its_last_checkpoint_on_disk(
    tmp_path: Path, framework: str
) -> None:
    # execgraph runs in its default durability ("async"): the time counted must still end
    # with the run durable, so the last checkpoint is readable from another connection.
    record = run_steps(framework, 3, tmp_path)
    assert record.status == "COMPLETED"
    reader = SqliteSaver(sqlite3.connect(tmp_path / "checkpoints.db"))
    latest = reader.get_tuple(config())
    assert latest is not None
    assert latest.checkpoint["channel_values"]["status"] == "COMPLETED"
    expected = {} if framework == EXECGRAPH else {"durability": "sync"}
    assert durability(framework) == expected
