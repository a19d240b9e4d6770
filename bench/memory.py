"""6. Peak memory (tracemalloc) of a 1,000-step run versus a 10-step run.

tracemalloc starts right before ``invoke`` and stops after it, so the peak counts only what
the run itself allocated (graph, state, checkpoints, messages), not the imports. tracemalloc
slows Python down severalfold, so these runs are separate from the timed ones.
"""

from __future__ import annotations

import gc
import tracemalloc

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH, build_app, config, first_input, scripted_replies
from nodes.models import ScriptedChatModel

__all__ = ["measure", "peak_bytes"]

MB = 1024 * 1024
SMALL = 10


def peak_bytes(bench: Bench, framework: str, n: int) -> int:
    """Peak traced bytes while ``framework`` runs ``n`` steps."""
    model = ScriptedChatModel(scripted_replies(framework, n), keep_calls=1)
    app = build_app(framework, model, bench.fresh_dir(f"mem-{framework}-{n}"))
    gc.collect()
    tracemalloc.start()
    try:
        app.invoke(first_input(framework, n), config(), durability="sync")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    bench.log(f"  {framework:<20} {n:>5} steps  peak {peak / MB:8.1f} MB")
    return peak


def measure(bench: Bench) -> list[Row]:
    """Rows: peak at N ÷ peak at 10 steps, execgraph vs create_agent."""
    big = bench.long_steps
    bench.log(f"memory: {SMALL} and {big} steps under tracemalloc")
    peaks = {
        fw: (peak_bytes(bench, fw, SMALL), peak_bytes(bench, fw, big))
        for fw in (EXECGRAPH, "create_agent")
    }
    bench.extras["memory_mb"] = {fw: (a / MB, b / MB) for fw, (a, b) in peaks.items()}
    ours, base = peaks[EXECGRAPH], peaks["create_agent"]
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
                f"create_agent {base[0] / MB:.1f}->{base[1] / MB:.1f} MB"
            ),
        )
    ]
