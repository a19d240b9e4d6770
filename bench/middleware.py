"""10. ExecutorMiddleware: a ``create_agent`` tool step with the middleware against without.

The same ``create_agent`` agent, the same scripted model and the same LangChain tool
(declared ``read``, so no person is asked), each on a ``SqliteSaver`` on a file with
``durability="sync"``: once with ``ExecutorMiddleware`` (its execution store an embedded
SQLite file beside the checkpoints) and once without. The middleware needs the same
durability as the bare agent to be crash-safe: a model reply lost with an unsaved
checkpoint is asked for again, and its new tool call ids are new calls. The cost per step
is the run's wall time divided by its tool steps, until the last checkpoint is on disk.
Both are repeated (five times, three under ``--quick``: one step's difference is a few
milliseconds, less than a shared machine's noise between two runs) and interleaved, the
median kept.
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from bench.core import Bench, Row, Target
from bench.workload import THREAD, config, open_saver, scripted_replies
from execgraph.testing import ScriptedChatModel

__all__ = ["THREAD", "measure", "per_step_ms", "run_agent"]

WITH, WITHOUT = "with_middleware", "create_agent"
STEPS = (10, 100)
_TARGET = Target(1.5, "<= 1.5x")


@tool("noop")
def noop(i: int) -> str:
    """Do nothing and say ok."""
    return "ok"


noop.metadata = {"effect": "read"}  # the middleware runs it without asking anyone


def run_agent(middleware: bool, n: int, directory: Path) -> float:
    """ms per tool step of one ``n``-step run, with or without the middleware."""
    from langchain.agents import create_agent

    from execgraph import ExecutorMiddleware

    directory.mkdir(parents=True, exist_ok=True)
    model = ScriptedChatModel(scripted_replies(WITHOUT, n), keep_calls=1)
    extra: list[Any] = [ExecutorMiddleware(home=directory)] if middleware else []
    app = create_agent(
        model, [noop], checkpointer=open_saver(directory / "checkpoints.db"), middleware=extra
    )
    ask: Any = {"messages": [HumanMessage("Call noop until told to stop.")]}
    gc.collect()
    start = time.perf_counter()
    run_config: Any = config()
    out = app.invoke(ask, run_config, durability="sync")
    elapsed = time.perf_counter() - start
    if out["messages"][-1].content != "done" or model.remaining:
        raise RuntimeError(f"the {n}-step run did not end as scripted")
    return elapsed * 1000 / n


def per_step_ms(bench: Bench, n: int) -> dict[str, float]:
    """Median ms per step with and without the middleware at ``n`` steps."""
    reps = 3 if bench.quick else 5
    samples: dict[str, list[float]] = {WITH: [], WITHOUT: []}
    for _ in range(reps):
        for name in samples:
            cost = run_agent(name == WITH, n, bench.fresh_dir(f"{name}-{n}"))
            bench.log(f"  {name:<20} {n:>5} steps  {cost:8.2f} ms/step")
            samples[name].append(cost)
    return {name: statistics.median(values) for name, values in samples.items()}


def measure(bench: Bench) -> list[Row]:
    """Rows: the agent's cost per tool step with the middleware against without."""
    for name in (WITH, WITHOUT):  # imports and first-call caches paid untimed
        run_agent(name == WITH, 2, bench.fresh_dir(f"warm-{name}"))
    rows = []
    for n in (s for s in STEPS if s <= bench.long_steps):
        bench.log(f"middleware: {n} steps")
        costs = per_step_ms(bench, n)
        bench.extras.setdefault("middleware_ms", {})[n] = costs
        rows.append(
            Row(
                "10 middleware",
                f"create_agent tool step, {n} steps",
                costs[WITH],
                costs[WITHOUT],
                "ms/step",
                "create_agent+SqliteSaver(sync), no middleware",
                _TARGET if n == 100 else None,
                "both create_agent+SqliteSaver(sync); execgraph = with ExecutorMiddleware",
            )
        )
    return rows
