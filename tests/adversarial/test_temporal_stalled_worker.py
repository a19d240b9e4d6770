"""Two Temporal workers, one stopped (SIGSTOP) past its leases and woken (SIGCONT): its
woken attempt is no one's cancel, and nothing happens twice.

Each trial runs one ledger run (four posts, then finish) on two worker processes
(:mod:`tests.adversarial.stalled_temporal_worker`: one home, 3 s leases, a 2 s heartbeat
timeout). The worker running the run is stopped — inside a post, before its effect, or
between two posts — until the other has taken the run over and gone on; then it is
woken, while the run still runs. Temporal cancels the woken worker's timed-out attempt;
that cancel stops the attempt only: the run ends COMPLETED, and the workflow's result,
the log's ``run.finished`` and the checkpoint say the same (the woken worker's late
checkpoint is refused: checkpoints are fenced by the run lease). Every entry is booked
once (the tool checks its fence before the effect, and the ledger refuses a key it
booked: a stale owner's late post is counted, refused).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from execgraph.engines.embedded.foreign import read_home_state
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalRuns
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.adversarial.stalled_temporal_worker import ENTRIES

pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parents[2]
TRIALS = int(os.environ.get("STALLED_TRIALS", "20"))
HEARTBEAT_TIMEOUT_S = 2.0
KEY = "stalled-test-approval-key"


@contextmanager
def _workers(address: str, queue: str, home: Path, n: int = 2) -> Iterator[list[int]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "EXECGRAPH_APPROVAL_SECRET": KEY}
    argv = [sys.executable, "-m", "tests.adversarial.stalled_temporal_worker"]
    argv += [address, queue, str(home)]
    out = subprocess.PIPE
    procs = [
        subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.DEVNULL, text=True)
        for _ in range(n)
    ]
    try:
        pids = []
        for proc in procs:
            assert proc.stdout is not None
            pids.append(json.loads(proc.stdout.readline())["ready"])
        yield pids
    finally:
        for proc in procs:
            with suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait(30)


async def _wait(check: Any, bound_s: float, step_s: float = 0.01) -> Any:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        await asyncio.sleep(step_s)
    return None


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _posted(home: Path, rid: str) -> int:
    return sum(1 for line in _lines(home / "ledger.jsonl") if rid in line["key"])


def _owner_in_tool(home: Path) -> tuple[int, str] | None:
    for mark in (home / "busy").glob("*"):
        with suppress(OSError):
            return int(mark.name), mark.read_text()
    return None


async def _trial(runs: TemporalRuns, home: Path, rid: str, inside: bool) -> dict[str, Any]:
    await runs.start(RunSpec(rid, {"goal": "Post four entries"}, model="poster", tools="ledger"))
    first = await _wait(lambda: _owner_in_tool(home), 60)
    assert first is not None, "no post ever ran"
    pid, entry = first
    if not inside:  # between two posts: once this one is over
        await _wait(lambda: _owner_in_tool(home) != first, 10)
    os.kill(pid, signal.SIGSTOP)
    try:
        # the other worker takes the run over and goes on, past the stopped one's post
        at_stop = _posted(home, rid)
        await _wait(lambda: _posted(home, rid) > at_stop, 60, 0.05)
    finally:
        os.kill(pid, signal.SIGCONT)  # woken while the run may still run
    final = await asyncio.wait_for(runs.result(rid), 120)
    return {"inside": inside, "entry": entry, "status": final.status, "error": final.error}


def _records(home: Path, rid: str) -> tuple[str | None, str | None]:
    with SqliteExecutionStore(home / "exec.db") as store:
        finished = [e.payload for e in store.events(rid) if e.type == "run.finished"]
    logged = str(finished[-1].get("status")) if finished else None
    checkpoint = read_home_state(Home(home), rid).values.get("status")
    return logged, checkpoint


def test_a_stopped_worker_woken_after_a_takeover_cancels_nothing_and_repeats_nothing(
    temporal_address: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    queue = f"stalled-{uuid.uuid4().hex[:6]}"

    async def trials() -> list[dict[str, Any]]:
        runs = await TemporalRuns.connect(
            temporal_address, task_queue=queue, heartbeat_s=HEARTBEAT_TIMEOUT_S
        )
        found = []
        for n in range(TRIALS):
            rid = f"st{n}-{uuid.uuid4().hex[:4]}"
            trial = await _trial(runs, home, rid, inside=n % 2 == 0)
            trial["log"], trial["checkpoint"] = _records(home, rid)
            trial["run_id"] = rid
            found.append(trial)
        return found

    with _workers(temporal_address, queue, home):
        found = asyncio.run(trials())
    report = "\n".join(json.dumps(t) for t in found)
    booked = Counter(line["key"] for line in _lines(home / "ledger.jsonl"))
    refused = _lines(home / "refused.jsonl")
    assert len(found) == TRIALS
    for trial in found:
        assert trial["status"] == trial["log"] == "COMPLETED", report  # no one cancelled it
    assert [k for k, n in booked.items() if n > 1] == [], report  # no effect twice
    assert len(booked) == TRIALS * ENTRIES, report  # and none missing
    fenced = [r for r in refused if r.get("fenced")]
    print(
        f"{TRIALS} trials; {len(refused)} late posts of stopped owners refused "
        f"({len(fenced)} by their fence, before the ledger)"
    )
    # the woken owner's graph wrote no checkpoint after the run ended (its writes are
    # fenced by the run lease): the checkpoint says what the workflow and the log say
    assert [t for t in found if t["checkpoint"] != "COMPLETED"] == [], report
