"""6. Peak memory (tracemalloc) of a 1,000-step run versus a 10-step run.

tracemalloc starts right before ``invoke`` and stops after it, so the peak counts only what
the run itself allocated (graph, state, checkpoints, messages), not the imports. tracemalloc
slows Python down severalfold, so these runs are separate from the timed ones.

The growth is also attributed: at the run's last model call (inside the run, where the peak
is) a snapshot groups the memory the run still holds by the package that allocated it, so
the report tells execgraph's own state from LangGraph's per-invoke bookkeeping. LangGraph's
floor (:mod:`bench.floor_graph`: one node, a counter) shows what a long ``invoke`` grows by
in LangGraph itself, whatever the graph keeps.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.core import Bench, Row, Target
from bench.workload import (
    EXECGRAPH,
    build_app,
    config,
    durability,
    first_input,
    scripted_replies,
)
from execgraph.testing import ScriptedChatModel

__all__ = ["held_by_package", "measure", "peak_bytes"]

MB = 1024 * 1024
KB = 1024
SMALL = 10
_OURS = ("bench", "graph", "nodes", "state", "tools")


def _package(filename: str) -> str:
    """The package a traced allocation came from: execgraph, a library, or python."""
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].split(".")[0]
    if any(p in _OURS for p in parts[-3:-1]):
        return "execgraph"
    return "python"


def held_by_package(snapshot: tracemalloc.Snapshot) -> dict[str, int]:
    """Bytes a snapshot holds, per allocating package."""
    held: Counter[str] = Counter()
    for stat in snapshot.statistics("filename"):
        held[_package(stat.traceback[0].filename)] += stat.size
    return dict(held)


def _snapshot_at_last_call(replies: list[Any], into: dict[str, Any]) -> list[Any]:
    """The script with its last reply taking a snapshot first (the run is still live).

    The snapshot's own memory must not count: the peak so far is kept, and the peak is
    reset once the snapshot is gone.
    """
    last = replies[-1]

    def snap(_messages: Any) -> Any:
        into["peak"] = tracemalloc.get_traced_memory()[1]
        into["held"] = held_by_package(tracemalloc.take_snapshot())
        tracemalloc.reset_peak()
        return last

    return [*replies[:-1], snap]


def peak_bytes(bench: Bench, framework: str, n: int) -> tuple[int, dict[str, int]]:
    """Peak traced bytes while ``framework`` runs ``n`` steps, and what the run held."""
    into: dict[str, Any] = {}
    replies = _snapshot_at_last_call(scripted_replies(framework, n), into)
    model = ScriptedChatModel(replies, keep_calls=1)
    app = build_app(framework, model, bench.fresh_dir(f"mem-{framework}-{n}"))
    gc.collect()
    tracemalloc.start()
    try:
        app.invoke(first_input(framework, n), config(), **durability(framework))
        peak = max(tracemalloc.get_traced_memory()[1], into.get("peak", 0))
    finally:
        tracemalloc.stop()
    bench.log(f"  {framework:<20} {n:>5} steps  peak {peak / MB:8.1f} MB")
    return peak, into.get("held", {})


def _growth(small: dict[str, int], big: dict[str, int]) -> dict[str, float]:
    """KB more held at the last call of the long run than of the short one, per package."""
    grown = {p: (big.get(p, 0) - small.get(p, 0)) / KB for p in {*small, *big}}
    return dict(sorted(grown.items(), key=lambda kv: -kv[1]))


def _top(grown: dict[str, float], pick: Callable[[float], bool] = lambda kb: kb >= 10) -> str:
    return ", ".join(f"{p} {kb:+.0f} KB" for p, kb in grown.items() if pick(kb)) or "none"


def measure(bench: Bench) -> list[Row]:
    """Rows: peak at N ÷ peak at 10 steps, execgraph vs create_agent."""
    big = bench.long_steps
    bench.warm_up()  # imports, caches and the executor's shared threads: in no run's peak
    bench.log(f"memory: {SMALL} and {big} steps under tracemalloc")
    runs = {
        fw: (peak_bytes(bench, fw, SMALL), peak_bytes(bench, fw, big))
        for fw in (EXECGRAPH, "create_agent", "langgraph_floor")
    }
    peaks = {fw: (a[0], b[0]) for fw, (a, b) in runs.items()}
    grown = {fw: _growth(a[1], b[1]) for fw, (a, b) in runs.items()}
    bench.extras["memory_mb"] = {fw: (a / MB, b / MB) for fw, (a, b) in peaks.items()}
    bench.extras["memory_growth_kb_by_package"] = grown
    ours, base, floor = peaks[EXECGRAPH], peaks["create_agent"], peaks["langgraph_floor"]
    return [
        Row(
            "6 peak memory",
            f"peak {big} / peak {SMALL} steps",
            ours[1] / ours[0],
            base[1] / base[0],
            "x",
            "create_agent",
            Target(1.2, "execgraph <= 1.2", on="value"),
            note=(
                f"execgraph {ours[0] / MB:.1f}->{ours[1] / MB:.1f} MB; "
                f"create_agent {base[0] / MB:.1f}->{base[1] / MB:.1f} MB; "
                f"LangGraph floor {floor[0] / MB:.2f}->{floor[1] / MB:.2f} MB "
                f"({floor[1] / floor[0]:.2f}x, {_top(grown['langgraph_floor'])}); "
                f"held more at the last call of the long run, by package: "
                f"{_top(grown[EXECGRAPH])} (execgraph's own code "
                f"{grown[EXECGRAPH].get('execgraph', 0.0):+.0f} KB)"
            ),
        )
    ]
