"""3. SQLite size after a 1,000-step run.

Every SQLite file of the run counts (database, ``-wal``, ``-shm``): for execgraph the
checkpoint database plus the execution store; for LangGraph the checkpoint database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH

__all__ = ["measure"]

MB = 1024 * 1024


def _count(path: Path, table: str) -> int:
    """Rows in ``table`` of the database at ``path`` (0 when absent)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def per_step(directory: Path, steps: int) -> dict[str, float]:
    """Checkpoints, checkpoint writes and store events written per tool step."""
    return {
        "checkpoints": _count(directory / "checkpoints.db", "checkpoints") / steps,
        "writes": _count(directory / "checkpoints.db", "writes") / steps,
        "events": _count(directory / "exec.db", "events") / steps,
    }


def measure(bench: Bench) -> list[Row]:
    """Rows: bytes on disk, execgraph vs create_agent (target ≥ 50× smaller)."""
    bench.log(f"size: {bench.long_steps}-step runs")
    ours = bench.long_run(EXECGRAPH)
    rows = []
    assert ours.directory is not None
    counts = {EXECGRAPH: per_step(ours.directory, ours.steps)}
    for fw in ("create_agent", "create_react_agent"):
        base = bench.long_run(fw)
        assert base.directory is not None
        counts[fw] = per_step(base.directory, base.steps)
        ours_c, base_c = counts[EXECGRAPH], counts[fw]
        rows.append(
            Row(
                "3 sqlite size",
                f"after {bench.long_steps} steps",
                ours.db_bytes / MB,
                base.db_bytes / MB,
                "MB",
                fw,
                Target(0.02, "<= 0.02x (50x smaller)") if fw == "create_agent" else None,
                note=(
                    f"per step: execgraph {ours_c['checkpoints']:.1f} checkpoints, "
                    f"{ours_c['writes']:.1f} writes, {ours_c['events']:.1f} store events; "
                    f"{fw} {base_c['checkpoints']:.1f} checkpoints, {base_c['writes']:.1f} writes"
                ),
            )
        )
    bench.extras["rows_per_step"] = counts
    return rows
