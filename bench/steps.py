"""1. Cost per tool step at 10, 100 and 1,000 steps, counted until the run is durable.

Each framework runs the same script in the durability that makes it crash-safe
(:func:`bench.workload.durability`: ``"sync"`` for LangGraph's agents, execgraph's default
for execgraph), counted until its last checkpoint is on disk; the cost per step is the
run's wall time divided by its tool steps. Rows marked ``execgraph sync`` show what
execgraph costs when it too waits for every checkpoint. ``langgraph_floor``
(:mod:`bench.floor_graph`) is the least a step on the same checkpointer costs, which
tells how much of the ratio against ``create_agent`` without a checkpointer the
checkpointer alone takes. Short runs are repeated five times and the median kept,
frameworks interleaved so that noise from other work on the machine spreads evenly.
"""

from __future__ import annotations

import statistics

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH, EXECGRAPH_SYNC

__all__ = ["measure"]

BASELINES = ("create_agent", "create_react_agent", "create_agent_nocp", "langgraph_floor")
_LABELS = {
    "create_agent": "create_agent+SqliteSaver(sync)",
    "create_react_agent": "create_react_agent+SqliteSaver(sync)",
    "create_agent_nocp": "create_agent, no checkpointer",
    "langgraph_floor": "LangGraph floor: 1 node+SqliteSaver(sync)",
}
_TARGETS = {
    "create_agent": Target(1.0, "<= 1.0x"),
    "create_agent_nocp": Target(1.5, "<= 1.5x"),
}


def per_step_ms(bench: Bench, n: int) -> dict[str, float]:
    """Median ms per step of each framework at ``n`` steps."""
    ours = (EXECGRAPH, EXECGRAPH_SYNC)
    if n >= bench.long_steps:
        return {fw: bench.long_run(fw).per_step_ms for fw in (*ours, *BASELINES)}
    reps = 1 if bench.quick else 5
    samples: dict[str, list[float]] = {fw: [] for fw in (*ours, *BASELINES)}
    for _ in range(reps):
        for fw in samples:
            samples[fw].append(bench.run(fw, n).per_step_ms)
    return {fw: statistics.median(values) for fw, values in samples.items()}


def measure(bench: Bench) -> list[Row]:
    """Rows: execgraph vs each baseline at every step count."""
    rows: list[Row] = []
    for n in bench.step_counts:
        bench.log(f"steps: {n}")
        costs = per_step_ms(bench, n)
        bench.extras.setdefault("steps_ms", {})[n] = costs
        for fw in BASELINES:
            target = _TARGETS.get(fw) if n == 100 else None
            note = _floor_note(costs) if fw == "create_agent_nocp" else ""
            rows.append(
                Row(
                    "1 cost/step",
                    f"{n} steps",
                    costs[EXECGRAPH],
                    costs[fw],
                    "ms/step",
                    _LABELS[fw],
                    target,
                    note,
                )
            )
        rows.extend(
            Row(
                "1 cost/step",
                f"{n} steps, execgraph sync",
                costs[EXECGRAPH_SYNC],
                costs[fw],
                "ms/step",
                _LABELS[fw],
            )
            for fw in ("create_agent", "create_agent_nocp")
        )
    return rows


def _floor_note(costs: dict[str, float]) -> str:
    """How much of the no-checkpointer ratio LangGraph's own checkpointed step takes, and
    execgraph's own work above it (both waiting for every checkpoint: the same durability)."""
    floor, nocp = costs["langgraph_floor"], costs["create_agent_nocp"]
    return (
        f"LangGraph floor alone {floor / nocp:.2f}x; execgraph's own work "
        f"{costs[EXECGRAPH_SYNC] - floor:.1f} ms/step above it (both sync)"
    )
