"""Kill workers under load: N ledger runs on Temporal, W worker processes, SIGKILLs.

Workers (:mod:`tests.support.temporal_worker`) share one PostgreSQL database. While the
runs are in flight, a killer SIGKILLs a random worker every so often — most of the time
while one of its tools is running (its marker file exists), otherwise at a random moment
— and starts a new worker in its place. Temporal gives a dead worker's advances to the
others once their heartbeats stop; the execution store turns those retries into one
effect each. When every run has ended, each run's world, records and final state are
compared by :func:`tests.reliability.torture.analyze`, as for the single-machine torture.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.engines.temporal import RunSpec, TemporalRuns
from tests.reliability.crash_worker import LEDGER_TASK
from tests.reliability.torture import Records, TrialResult, analyze, lock_held
from tests.support.temporal_worker import graphs_on

__all__ = ["HarnessResult", "run_harness"]

REPO = Path(__file__).resolve().parents[2]
ARCHS = ("react", "plan_execute", "hybrid")
HEARTBEAT_TIMEOUT_S = 3.0


@dataclass
class HarnessResult:
    """What the harness did, and what it found per run."""

    runs: list[TrialResult] = field(default_factory=list)
    kills: int = 0
    kills_mid_tool: int = 0
    unknown_probed: int = 0
    disagreements: int = 0
    notes: list[str] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(int(getattr(r, name)) for r in self.runs)

    def render(self) -> str:
        statuses: dict[str, int] = {}
        for r in self.runs:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        lines = [
            f"{len(self.runs)} runs {statuses}; {self.kills} kills "
            f"({self.kills_mid_tool} mid-tool); duplicates {self.total('duplicates')}, "
            f"lost commits {self.total('lost_commits')}, orphans {self.total('orphans')}, "
            f"unknown left on a probed tool {self.unknown_probed}, "
            f"leaked locks {self.total('leaked_locks')}, workflow/state disagreements "
            f"{self.disagreements}",
            *self.notes,
            *(f"{r.index}: {n}" for r in self.runs for n in r.notes),
        ]
        return "\n".join(lines)


class _Worker:
    """One worker process (a new one replaces it when it is killed)."""

    def __init__(self, address: str, queue: str, dsn: str, base: Path, slot: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-m", "tests.support.temporal_worker", address, queue, dsn]
        log = open(base / f"worker-{slot}.log", "a")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [*argv, str(base)], stdout=subprocess.PIPE, stderr=log, text=True, env=env
        )
        log.close()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until it polls (or dies)
        if not line:
            shown = (base / f"worker-{slot}.log").read_text()[-3000:]
            raise AssertionError(f"worker {slot} died starting:\n{shown}")
        self.pid = int(json.loads(line)["ready"])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


async def _killer(
    workers: dict[int, _Worker],
    spawn: Any,
    base: Path,
    kills: int,
    rng: random.Random,
    done: asyncio.Event,
    result: HarnessResult,
) -> None:
    """Kill a live worker every 0.1–0.6 s until ``kills``; start its replacement at once
    (it joins when it is ready, so the others carry the load meanwhile)."""
    starting: list[asyncio.Future[None]] = []

    async def replace(slot: int) -> None:
        workers[slot] = await asyncio.to_thread(spawn, slot)

    while result.kills < kills and not done.is_set():
        await asyncio.sleep(rng.uniform(0.1, 0.6))
        if not workers:
            continue
        slot = rng.choice(sorted(workers))
        victim = workers[slot]
        mid_tool = False
        if rng.random() < 0.7:  # wait (bounded) for one of its tools to be running
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and not done.is_set():
                if any((base / "busy").glob(f"{victim.pid}-*")):
                    mid_tool = True
                    break
                await asyncio.sleep(0.005)
        if done.is_set() or workers.get(slot) is not victim:
            break
        del workers[slot]
        victim.kill()
        result.kills += 1
        result.kills_mid_tool += int(mid_tool)
        starting.append(asyncio.ensure_future(replace(slot)))
    await asyncio.gather(*starting)


def _records(dsn: str, run_id: str) -> Records:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT idempotency_key, call_id, tool, state, result FROM execgraph_executions "
            "WHERE run_id = %s",
            (run_id,),
        ).fetchall()
        records = [
            {"key": k, "call_id": c, "tool": t, "state": s, "result": json.loads(r or "null")}
            for k, c, t, s, r in rows
        ]
        locks = conn.execute("SELECT key, owner, lease_until FROM execgraph_locks").fetchall()
    held = [f"{k} (owner {o})" for k, o, until in locks if run_id in k and lock_held(k, o, until)]
    return records, held


def _check(dsn: str, base: Path, index: int, spec: RunSpec, reached: Any) -> TrialResult:
    """Write the run's final state where :func:`analyze` reads it, and analyze the run."""
    graph = graphs_on(dsn, base)(spec)
    values = graph.get_state({"configurable": {"thread_id": spec.run_id}}).values
    final = {"status": values.get("status"), "results": values.get("results") or {}}
    run_dir = base / spec.run_id
    (run_dir / "final.json").write_text(json.dumps(final, default=str))
    trial = TrialResult(index, str(reached.status))
    if values.get("status") != reached.status:
        trial.notes.append(f"workflow says {reached.status}, the run's state {final['status']}")
    analyze(run_dir, trial, _records(dsn, spec.run_id))
    return trial


def _unknown_on_probed(dsn: str, run_id: str) -> int:
    records, _ = _records(dsn, run_id)
    return sum(
        1
        for r in records
        if r["tool"] == "append_ledger"
        and (r["state"] != "committed" or r["result"]["outcome"] == "unknown")
    )


async def run_harness(
    address: str,
    dsn: str,
    base: Path,
    *,
    runs: int = 30,
    workers: int = 3,
    kills: int = 10,
    seed: int = 0,
    timeout_s: float = 600.0,
) -> HarnessResult:
    """Run the harness; every process it started is gone when it returns."""
    rng = random.Random(seed)
    queue = f"kill-{seed}-{os.getpid()}"
    result = HarnessResult()

    def spawn(slot: int) -> _Worker:
        return _Worker(address, queue, dsn, base, slot)

    pool = {slot: spawn(slot) for slot in range(workers)}
    try:
        client = await TemporalRuns.connect(
            address, task_queue=queue, heartbeat_s=HEARTBEAT_TIMEOUT_S
        )
        specs = [
            RunSpec(f"ledger-{seed}-{i:02d}", task=LEDGER_TASK, arch=ARCHS[i % len(ARCHS)])
            for i in range(runs)
        ]
        for spec in specs:
            await client.start(spec)
        done = asyncio.Event()
        killer = asyncio.ensure_future(_killer(pool, spawn, base, kills, rng, done, result))
        try:
            finals = await asyncio.wait_for(
                asyncio.gather(*(client.result(s.run_id) for s in specs)), timeout_s
            )
        finally:
            done.set()
            await killer
        for i, (spec, reached) in enumerate(zip(specs, finals, strict=True)):
            trial = await asyncio.to_thread(_check, dsn, base, i, spec, reached)
            result.unknown_probed += _unknown_on_probed(dsn, spec.run_id)
            result.disagreements += int(any("workflow says" in n for n in trial.notes))
            result.runs.append(trial)
    finally:
        for w in pool.values():
            w.kill()
    return result
