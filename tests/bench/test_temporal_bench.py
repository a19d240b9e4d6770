"""The Temporal benchmark on a tiny configuration: real worker processes, a real dev
server, real PostgreSQL. Only structure and sanity are asserted (every run completed,
the figures follow from the recorded counts and clock), never a speed."""

from __future__ import annotations

import math
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from bench.core import Bench
from bench.cpu import CpuClock, bench_processes
from bench.temporal import Config, run_measurement
from bench.temporal_pool import worker_processes
from bench.temporal_workload import TOOL, Workload, script


@pytest.mark.timeout(900)
def test_tiny_temporal_measurement(
    tmp_path: Path, postgres_dsn: str, temporal_address: str
) -> None:
    config = Config(workers=(1, 2), runs=4, steps=2, sleep_s=0.02, overhead_runs=2, repeats=3)
    bench = Bench(quick=True, root=tmp_path, log=lambda _m: None)

    rows = run_measurement(bench, config, postgres=postgres_dsn, temporal=temporal_address)

    raw = bench.extras["temporal"]
    for count in config.workers:
        got = raw["throughput"][count]
        assert got["statuses"] == {"COMPLETED": config.runs * config.repeats}
        assert len(got["batches_s"]) == config.repeats
        assert got["elapsed_s"] == sorted(got["batches_s"])[1]  # the median batch
        assert 1 <= got["workers_used"] <= count
        assert got["elapsed_s"] > 0
        assert 0 < got["median_activity_s"] <= got["median_run_s"]
        assert 0 < got["slots_busy"] <= 1  # runs in advances never exceed the slots
        assert math.isclose(got["runs_per_min"], config.runs / got["elapsed_s"] * 60)
        assert math.isclose(got["steps_per_s"], got["runs_per_min"] / 60 * config.steps)
        if got["machine_cores_busy"] is not None:  # Linux: CPU per step from the groups
            ours = sum(got[f"{g}_cores"] for g in ("workers", "temporal", "postgres", "client"))
            per_step = ours * got["elapsed_s"] / (config.runs * config.steps)
            assert got["cpu_ms_per_step"] == pytest.approx(per_step * 1000)
            assert got["cpu_bound_steps_per_s"] == pytest.approx(got["cores"] / per_step)
            assert got["workers_cores"] > 0 and got["temporal_cores"] > 0
    over = raw["overhead"]
    assert over["statuses"] == {
        "embedded COMPLETED": config.overhead_runs,
        "temporal COMPLETED": config.overhead_runs,
    }
    assert over["embedded_ms_per_step"] > 0 and over["temporal_ms_per_step"] > 0
    # the activity is part of its run: it cannot have taken longer than the whole run
    assert all(0 < a <= t for a, t in zip(over["activity_s"], over["temporal_runs_s"], strict=True))

    by_case = {r.metric: r for r in rows}
    assert len(rows) == 2 * len(config.workers) + 1
    one = by_case["1 worker: 4 runs x 2 x 20 ms"]
    two = by_case["2 workers: 4 runs x 2 x 20 ms"]
    assert one.base is None and one.ours == raw["throughput"][1]["runs_per_min"]
    assert two.ratio == pytest.approx(two.ours / one.ours)  # speed-up over one worker
    assert "max_concurrent" in one.note
    step = rows[-1]
    assert step.unit == "ms" and step.ratio == pytest.approx(
        over["temporal_ms_per_step"] / over["embedded_ms_per_step"]
    )
    for count in config.workers:  # every worker process was stopped and reaped
        for pid in raw["throughput"][count]["worker_pids"]:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_script_calls_the_tool_k_times_then_finishes() -> None:
    turn = script(Workload(steps=2, sleep_s=0.5))
    messages: list = [HumanMessage("go")]
    names = []
    for _ in range(3):
        reply = turn(messages)
        call = reply.tool_calls[0]
        names.append((call["name"], call["args"]))
        messages += [reply, ToolMessage("ok", tool_call_id=call["id"])]
    assert names == [
        (TOOL, {"i": 0, "seconds": 0.5}),
        (TOOL, {"i": 1, "seconds": 0.5}),
        ("finish", {"output": "done"}),
    ]
    # the same transcript gives the same turn, from any worker
    assert turn(messages[:3]).tool_calls[0]["args"] == {"i": 1, "seconds": 0.5}
    assert isinstance(turn([]), AIMessage)


def test_cpu_clock_counts_this_process_spinning() -> None:
    clock = CpuClock(lambda: {"me": {os.getpid()}, "gone": {2**22 + 7}})
    clock.start()
    spent = os.times()
    while os.times().user - spent.user < 0.2:
        pass
    cores = clock.stop()
    if cores["machine_cores_busy"] is None:
        pytest.skip("no /proc here")
    assert cores["me_cores"] is not None and cores["me_cores"] > 0
    assert cores["gone_cores"] == 0  # a pid that does not exist used nothing
    assert 0 < cores["machine_cores_busy"] <= cores["cores"]
    assert 0 <= cores["irq_cores"] <= cores["machine_cores_busy"]


def test_bench_processes_finds_the_dev_server_and_postgres(
    postgres_dsn: str, temporal_address: str
) -> None:
    groups = bench_processes({12345}, urlsplit(postgres_dsn).port)
    assert groups["workers"] == {12345} and groups["client"] == {os.getpid()}
    assert groups["temporal"], "the session's dev server is a child of this process"
    assert len(groups["postgres"]) >= 2  # the postmaster and its background processes


@pytest.mark.timeout(300)
def test_a_worker_that_cannot_start_fails_loudly(tmp_path: Path) -> None:
    """No database to open: the worker exits before its ready line and the pool says so,
    with the worker's own error, instead of waiting for it."""
    with (
        pytest.raises(RuntimeError, match=r"exited \(1\) before ready") as failed,
        worker_processes(
            1,
            address="127.0.0.1:1",
            task_queue="q",
            dsn="postgresql://nobody@127.0.0.1:1/none",  # nothing listens there
            directory=tmp_path,
            workload=Workload(1, 0.0),
            max_concurrent=1,
            connect_timeout_s=1.0,  # how long it tries does not matter, only that it fails
        ),
    ):
        pytest.fail("the pool yielded without a ready worker")
    assert "cannot connect" in str(failed.value)
