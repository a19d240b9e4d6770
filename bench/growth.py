"""2. Growth: mean cost of the last 50 steps ÷ the first 50 steps of a 1,000-step run.

Step k's cost is the gap between model call k and model call k+1 (recorded by the scripted
model's callable replies), so it covers the tool call, the checkpoints and the reducers.
execgraph's figure is the median of three runs: its two windows are 0.25 s apart in a
5-second run, so a change of the machine's pace in between moved one run's ratio
anywhere from 0.7 to 1.5 (a 2-core VM). LangGraph's agents grow 6-10x in one run, far
from any line, and a 1,000-step run of theirs takes a minute, so they run once.
"""

from __future__ import annotations

import statistics

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH, RunRecord

__all__ = ["growth", "measure"]

WINDOW = 50
RUNS = 3  # execgraph's long runs for the median (the shared long run and two more)


def _window(steps: int) -> int:
    return min(WINDOW, max(steps // 4, 1))


def growth(record: RunRecord) -> tuple[float, float, float]:
    """(first-window mean ms, last-window mean ms, last ÷ first) of one run."""
    costs = record.step_costs_ms()
    window = _window(len(costs))
    first = statistics.fmean(costs[:window])
    last = statistics.fmean(costs[-window:])
    return first, last, last / first


def measure(bench: Bench) -> list[Row]:
    """Rows: execgraph's last÷first growth against create_agent's and create_react_agent's."""
    bench.log(f"growth: {bench.long_steps}-step runs")
    figures = {fw: growth(bench.long_run(fw)) for fw in ("create_agent", "create_react_agent")}
    runs = [growth(bench.long_run(EXECGRAPH))]
    runs += [growth(bench.run(EXECGRAPH, bench.long_steps)) for _ in range(RUNS - 1)]
    ours = sorted(runs, key=lambda run: run[2])[len(runs) // 2]
    figures[EXECGRAPH] = ours
    bench.extras["growth"] = figures
    bench.extras["growth_runs"] = runs
    spread = ", ".join(f"{run[2]:.2f}" for run in runs)
    rows = []
    for fw in ("create_agent", "create_react_agent"):
        base = figures[fw]
        rows.append(
            Row(
                "2 growth",
                f"last/first {_window(bench.long_steps)} of {bench.long_steps}",
                ours[2],
                base[2],
                "x",
                fw,
                Target(1.3, "execgraph <= 1.3", on="value") if fw == "create_agent" else None,
                note=(
                    f"execgraph {ours[0]:.1f}->{ours[1]:.1f} ms (median of {spread}); "
                    f"{fw} {base[0]:.1f}->{base[1]:.1f} ms"
                ),
            )
        )
    return rows
