"""9. Scale-out on Temporal: throughput with 1, 2 and 4 worker processes, and the cost of
the Temporal mode per tool step against the embedded one.

Throughput: M ReAct runs, each K tool steps of a tool sleeping 100 ms (I/O-bound), are
started at once through :class:`~execgraph.engines.temporal.TemporalRuns` on a real dev server
(``temporal server start-dev``) and advanced by N worker processes on ONE PostgreSQL
database (execution store and checkpoints). Each worker runs at most ``max_concurrent``
advances at once (a run is one advance: nothing in it pauses), so one worker holds at
most that many runs in flight, and more workers mean more capacity. The clock runs from
the first start to the last result; worker startup is before it. Each worker count runs
three batches on the same workers and keeps the batch of median time (two other
sessions may share this machine's cores).

Overhead: the same workload with the tool not sleeping, one run at a time, alternately
embedded (``graph.invoke`` in this process on the same database) and through Temporal
(one worker); the figure is the median run's time per tool step. Temporal's share is per
run (start a workflow, schedule its advance, record the result), so per step it shrinks
as runs grow longer.

Everything (the PostgreSQL cluster, the Temporal server, the workers) is started here
and stopped when the measurement ends, however it ends. No figure is a constant: each
is computed from this run's clock.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from bench.core import Bench, Row
from bench.cpu import CpuClock, bench_processes
from bench.temporal_history import activity_seconds
from bench.temporal_pool import worker_processes
from bench.temporal_workload import Workload, WorkloadGraphs, run_spec
from execgraph.engines.temporal.client import TemporalRuns
from execgraph.engines.temporal.messages import Reached

__all__ = ["QUICK", "Config", "measure", "run_measurement"]

SECTION = "9 temporal"


@dataclass(frozen=True)
class Config:
    """What one measurement runs (the defaults are the full benchmark)."""

    workers: tuple[int, ...] = (1, 2, 4)
    runs: int = 32
    steps: int = 4
    sleep_s: float = 0.1
    max_concurrent: int = 4
    overhead_runs: int = 8
    repeats: int = 3


QUICK = Config(runs=8, steps=2, overhead_runs=3, repeats=1)


def measure(bench: Bench) -> list[Row]:
    """Rows: runs/min and steps/s per worker count (ratio: speed-up over one worker), and
    ms per tool step through Temporal against embedded (ratio: Temporal ÷ embedded)."""
    return run_measurement(bench, QUICK if bench.quick else Config())


def run_measurement(
    bench: Bench,
    config: Config,
    *,
    postgres: str | None = None,
    temporal: str | None = None,
) -> list[Row]:
    """Run ``config``; ``postgres`` (an admin DSN of a cluster) and ``temporal`` (a
    server's address) are started here when not given."""
    from execgraph.engines.temporal.dev_server import dev_server
    from tests.support.postgres import fresh_database, postgres_cluster

    with ExitStack() as stack:
        admin = postgres or stack.enter_context(postgres_cluster())
        address = temporal or stack.enter_context(dev_server())
        throughput: dict[int, dict[str, Any]] = {}
        for count in config.workers:
            dsn = stack.enter_context(fresh_database(admin, "bench"))
            throughput[count] = _throughput(bench, config, count, address, dsn, admin)
        dsn = stack.enter_context(fresh_database(admin, "bench"))
        overhead = _overhead(bench, config, address, dsn)
    bench.extras["temporal"] = {
        "config": asdict(config),
        "throughput": throughput,
        "overhead": overhead,
    }
    return _rows(config, throughput, overhead)


def _throughput(
    bench: Bench, config: Config, count: int, address: str, dsn: str, admin: str
) -> dict[str, Any]:
    """Start ``config.runs`` runs at once on ``count`` ready workers and time them all,
    ``config.repeats`` times; the batch of median time is the figure."""
    workload = Workload(config.steps, config.sleep_s)
    queue = f"bench-{count}w-{uuid.uuid4().hex[:8]}"
    directory = bench.fresh_dir(f"temporal-{count}w")
    batches: list[dict[str, Any]] = []
    with worker_processes(
        count,
        address=address,
        task_queue=queue,
        dsn=dsn,
        directory=directory,
        workload=workload,
        max_concurrent=config.max_concurrent,
    ) as procs:
        for batch in range(config.repeats):
            pids, port = {p.pid for p in procs}, urlsplit(admin).port
            cpu = CpuClock(lambda: bench_processes(pids, port))  # noqa: B023 - used here
            specs = [run_spec(f"{queue}-{batch}-{i:03d}", workload) for i in range(config.runs)]
            cpu.start()
            elapsed, latencies, reached, inside = asyncio.run(_all_at_once(address, queue, specs))
            cores = cpu.stop()
            slots = count * config.max_concurrent
            statuses = Counter(r.status for r in reached)
            completed = statuses.get("COMPLETED", 0)
            batches.append(
                {
                    "elapsed_s": elapsed,
                    "runs_per_min": completed / elapsed * 60,
                    "steps_per_s": completed * config.steps / elapsed,
                    "completed": completed,
                    "statuses": statuses,
                    "workers_used": len({r.worker for r in reached}),
                    "median_run_s": statistics.median(latencies),
                    "median_activity_s": statistics.median(inside),
                    # how full the workers' advance slots were over the batch
                    "slots_busy": sum(inside) / (elapsed * slots),
                    **cores,
                }
            )
    chosen = sorted(batches, key=lambda b: b["elapsed_s"])[len(batches) // 2]
    chosen.update(_cpu_per_step(chosen, config.steps))
    result = {
        **chosen,
        "workers": count,
        "statuses": dict(sum((b["statuses"] for b in batches), Counter())),
        "batches_s": [b["elapsed_s"] for b in batches],
        "worker_pids": [p.pid for p in procs],
    }
    bench.log(
        f"  {count} worker(s): {result['runs_per_min']:.0f} runs/min, "
        f"{result['steps_per_s']:.1f} steps/s (median of batches "
        f"{', '.join(f'{b:.2f}' for b in result['batches_s'])} s), {result['statuses']}, "
        f"on {result['workers_used']} worker(s), slots {result['slots_busy']:.0%} busy, "
        f"cores busy {_cores(chosen)}, "
        f"{_per_step(chosen)}"
    )
    return result


def _cpu_per_step(batch: dict[str, Any], steps: int) -> dict[str, float | None]:
    """CPU ms our processes (workers, Temporal, PostgreSQL, client) spent per tool step,
    and the steps/s that allows on this machine's cores were nothing else running."""
    groups = ("workers", "temporal", "postgres", "client")
    used = [batch.get(f"{g}_cores") for g in groups]
    if any(u is None for u in used) or not batch["completed"]:
        return {"cpu_ms_per_step": None, "cpu_bound_steps_per_s": None}
    cpu_s = sum(u for u in used if u is not None) * batch["elapsed_s"]
    per_step = cpu_s / (batch["completed"] * steps)
    return {"cpu_ms_per_step": per_step * 1000, "cpu_bound_steps_per_s": batch["cores"] / per_step}


def _per_step(batch: dict[str, Any]) -> str:
    if batch.get("cpu_ms_per_step") is None:
        return "CPU per step n/a"
    return (
        f"{batch['cpu_ms_per_step']:.0f} ms CPU per tool step (<= "
        f"{batch['cpu_bound_steps_per_s']:.0f} steps/s on {batch['cores']:.0f} cores)"
    )


async def _all_at_once(
    address: str, queue: str, specs: list[Any]
) -> tuple[float, list[float], list[Reached], list[float]]:
    """Start every run, wait for every result: (wall s, each run's s, where each ended,
    and, read from the histories after the clock stopped, each run's s in its activity)."""
    runs = await TemporalRuns.connect(address, task_queue=queue)
    start = time.perf_counter()

    async def one(spec: Any) -> tuple[float, Reached]:
        began = time.perf_counter()
        await runs.start(spec)
        reached = await runs.result(spec.run_id)
        return time.perf_counter() - began, reached

    done = await asyncio.gather(*(one(spec) for spec in specs))
    elapsed = time.perf_counter() - start
    inside = [await activity_seconds(runs.client, spec.run_id) for spec in specs]
    return elapsed, [d[0] for d in done], [d[1] for d in done], inside


def _overhead(bench: Bench, config: Config, address: str, dsn: str) -> dict[str, Any]:
    """The same runs, tool not sleeping, one at a time: embedded and Temporal alternately."""
    workload = Workload(config.steps, 0.0)
    queue = f"bench-overhead-{uuid.uuid4().hex[:8]}"
    directory = bench.fresh_dir("temporal-overhead")
    graphs = WorkloadGraphs(dsn, directory / "embedded", workload)
    try:
        with worker_processes(
            1,
            address=address,
            task_queue=queue,
            dsn=dsn,
            directory=directory,
            workload=workload,
            max_concurrent=config.max_concurrent,
        ):
            embedded, temporal, inside, statuses = asyncio.run(
                _alternate(graphs, address, queue, workload, config.overhead_runs)
            )
    finally:
        graphs.close()
    emb, tem = statistics.median(embedded), statistics.median(temporal)
    result = {
        "embedded_ms_per_step": emb * 1000 / config.steps,
        "temporal_ms_per_step": tem * 1000 / config.steps,
        "temporal_extra_ms_per_run": (tem - emb) * 1000,
        # the Temporal run's time outside its advance activity: scheduling and round trips
        "temporal_outside_activity_ms_per_run": statistics.median(
            (t - a) * 1000 for t, a in zip(temporal, inside, strict=True)
        ),
        "activity_ms_per_run": statistics.median(inside) * 1000,
        "embedded_runs_s": embedded,
        "temporal_runs_s": temporal,
        "activity_s": inside,
        "statuses": dict(statuses),
    }
    bench.log(
        f"  overhead: embedded {result['embedded_ms_per_step']:.1f} ms/step, "
        f"Temporal {result['temporal_ms_per_step']:.1f} ms/step, {dict(statuses)}"
    )
    return result


async def _alternate(
    graphs: WorkloadGraphs, address: str, queue: str, workload: Workload, runs: int
) -> tuple[list[float], list[float], list[float], Counter[str]]:
    """One untimed run of each mode, then ``runs`` timed pairs (embedded, Temporal):
    their seconds, the seconds inside each Temporal run's activity, their statuses."""
    client = await TemporalRuns.connect(address, task_queue=queue)
    embedded: list[float] = []
    temporal: list[float] = []
    inside: list[float] = []
    statuses: Counter[str] = Counter()
    for index in range(runs + 1):
        spec = run_spec(f"{queue}-e{index:03d}", workload)
        began = time.perf_counter()
        out = await asyncio.to_thread(graphs.run_embedded, spec)
        took = time.perf_counter() - began
        spec = run_spec(f"{queue}-t{index:03d}", workload)
        began = time.perf_counter()
        await client.start(spec)
        reached = await client.result(spec.run_id)
        took_t = time.perf_counter() - began
        if index == 0:
            continue  # warm-up: first workflow on the queue, first run in this process
        embedded.append(took)
        temporal.append(took_t)
        inside.append(await activity_seconds(client.client, spec.run_id))
        statuses[f"embedded {out.get('status')}"] += 1
        statuses[f"temporal {reached.status}"] += 1
    return embedded, temporal, inside, statuses


def _cores(cores: dict[str, Any]) -> str:
    """``1.84/2 (workers 0.47, temporal 0.60, postgres 0.30, client 0.02, irq 0.10,
    others 0.35)``: ``others`` is every other process on the machine."""
    busy = cores.get("machine_cores_busy")
    if busy is None:
        return "n/a"
    names = ("workers", "temporal", "postgres", "client", "irq")
    parts = {name: cores.get(f"{name}_cores") or 0.0 for name in names}
    parts["others"] = max(busy - sum(parts.values()), 0.0)
    shown = ", ".join(f"{name} {value:.2f}" for name, value in parts.items())
    return f"{busy:.2f}/{cores['cores']:.0f} ({shown})"


def _rows(
    config: Config, throughput: dict[int, dict[str, Any]], overhead: dict[str, Any]
) -> list[Row]:
    ms = config.sleep_s * 1000
    load = f"{config.runs} runs x {config.steps} x {ms:.0f} ms"
    bound = f"a worker runs <= {config.max_concurrent} runs at once (max_concurrent)"
    if config.sleep_s > 0:  # what that alone allows, were a step nothing but its sleep
        ceiling = config.max_concurrent * 60 / (config.steps * config.sleep_s)
        bound += f", <= {ceiling:.0f} runs/min per worker from the sleeps alone"
    first = throughput.get(min(throughput)) if throughput else None
    rows: list[Row] = []
    for count, got in throughput.items():
        base = first if first is not None and count != min(throughput) else None
        label = f"{count} worker{'s' if count > 1 else ''}"
        note = (
            f"median of {config.repeats} batches; {got['completed']}/{config.runs} COMPLETED "
            f"in {got['elapsed_s']:.1f} s on "
            f"{got['workers_used']} worker(s); median run {got['median_run_s']:.2f} s from "
            f"start to result, {got['median_activity_s']:.2f} s in its advance; advance slots "
            f"{got['slots_busy']:.0%} busy; "
            f"cores busy {_cores(got)}; {_per_step(got)}"
        )
        if base is None:
            note += f"; {bound}"
        rows.append(
            Row(SECTION, f"{label}: {load}", got["runs_per_min"],
                base["runs_per_min"] if base else None, "runs/min",
                f"{min(throughput)} worker" if base else "", note=note)
        )  # fmt: skip
        rows.append(
            Row(SECTION, f"{label}: tool steps/s", got["steps_per_s"],
                base["steps_per_s"] if base else None, "steps/s",
                f"{min(throughput)} worker" if base else "")
        )  # fmt: skip
    rows.append(
        Row(
            SECTION,
            f"ms per tool step, {config.steps} steps, sleep 0, one run at a time",
            overhead["temporal_ms_per_step"],
            overhead["embedded_ms_per_step"],
            "ms",
            "embedded graph.invoke, same PostgreSQL",
            note=(
                f"Temporal adds {overhead['temporal_extra_ms_per_run']:.0f} ms per run "
                f"({overhead['temporal_outside_activity_ms_per_run']:.0f} ms of it outside "
                f"the advance activity, which ran {overhead['activity_ms_per_run']:.0f} ms); "
                f"medians of {config.overhead_runs}; {overhead['statuses']}"
            ),
        )
    )
    return rows
