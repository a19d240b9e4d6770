"""2. Growth: mean cost of the last 50 steps ÷ the first 50 steps of a 1,000-step run.

Step k's cost is the gap between model call k and model call k+1 (recorded by the scripted
model's callable replies), so it covers the tool call, the checkpoints and the reducers.
"""

from __future__ import annotations

import statistics

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH, RunRecord

__all__ = ["growth", "measure"]

WINDOW = 50


def growth(record: RunRecord) -> tuple[float, float, float]:
    """(first-window mean ms, last-window mean ms, last ÷ first) of one run."""
    costs = record.step_costs_ms()
    window = min(WINDOW, max(len(costs) // 4, 1))
    first = statistics.fmean(costs[:window])
    last = statistics.fmean(costs[-window:])
    return first, last, last / first


def measure(bench: Bench) -> list[Row]:
    """Rows: execgraph's last÷first growth against create_agent's and create_react_agent's."""
    bench.log(f"growth: {bench.long_steps}-step runs")
    figures = {
        fw: growth(bench.long_run(fw)) for fw in (EXECGRAPH, "create_agent", "create_react_agent")
    }
    bench.extras["growth"] = figures
    ours = figures[EXECGRAPH]
    rows = []
    for fw in ("create_agent", "create_react_agent"):
        base = figures[fw]
        rows.append(
            Row(
                "2 growth",
                f"last/first {WINDOW} of {bench.long_steps}",
                ours[2],
                base[2],
                "x",
                fw,
                Target(1.3, "execgraph <= 1.3", on="value") if fw == "create_agent" else None,
                note=(
                    f"execgraph {ours[0]:.1f}->{ours[1]:.1f} ms; "
                    f"{fw} {base[0]:.1f}->{base[1]:.1f} ms"
                ),
            )
        )
    return rows
