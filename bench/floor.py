"""7. The durable floor: a bare loop doing two SQLite commits per step.

Two transactions per step on a WAL database with ``synchronous=FULL`` (as the execution
store uses): no graph, no model, no serialization beyond a small row. It is the least a
step can cost while keeping both the checkpoint and the execution record durable; the ratio
shows how close execgraph's executor comes to it.
"""

from __future__ import annotations

import sqlite3
import time

from bench.core import Bench, Row
from bench.workload import EXECGRAPH

__all__ = ["floor_ms", "measure"]


def floor_ms(bench: Bench, n: int) -> float:
    """ms per step of n steps, each two committed inserts."""
    path = bench.fresh_dir("floor") / "floor.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, step INTEGER, payload TEXT)")
    payload = "x" * 200
    start = time.perf_counter()
    for step in range(n):
        for _ in range(2):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t (step, payload) VALUES (?, ?)", (step, payload))
            conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed * 1000 / n


def measure(bench: Bench) -> list[Row]:
    """Row: execgraph's cost per step at 100 steps vs the floor."""
    n = 100 if 100 in bench.step_counts else bench.step_counts[-1]
    bench.log(f"floor: 2 commits x {n * 10} steps")
    floor = floor_ms(bench, n * 10)
    costs = bench.extras.get("steps_ms", {}).get(n)
    ours = costs[EXECGRAPH] if costs else bench.run(EXECGRAPH, n).per_step_ms
    return [
        Row(
            "7 durable floor",
            f"{n} steps vs bare 2 commits/step",
            ours,
            floor,
            "ms/step",
            "sqlite floor",
            note="ratio = how many floors one execgraph step costs",
        )
    ]
