"""Two worker processes on one paused or running irreversible call: it runs exactly once.

Real processes on one real execution store (SQLite file, PostgreSQL) and one real
checkpointer. Each trial is a fresh thread: both workers approve the same interrupt at the
same instant (a wall-clock barrier both spin on), or one runs the call while the other
resumes the thread with ``invoke(None, cfg)``. The tool holds its effect until the race
is met — a second invocation started (the duplicate) or the second worker waits for the
first one's call — so every trial really races. Effects are counted by the world: the
ledger lines the tool appended.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.store import open_store
from tests.support.workers import Worker, release_when, start_pair

TRIALS = int(os.environ.get("EXECGRAPH_RACE_TRIALS", "100"))

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Worker, Worker, str]]:
    """Two workers on one store and checkpointer of each backend, and the store's URL."""
    if request.param == "sqlite":
        store, checkpoints = str(tmp_path / "exec.db"), str(tmp_path / "checkpoints.db")
    else:
        store = checkpoints = str(request.getfixturevalue("postgres_database"))
    a, b = start_pair(store, tmp_path / "w", checkpoints)
    yield a, b, store
    a.close()
    b.close()


def _effects(base: Path, trial: int) -> int:
    ledger = base / f"ledger-{trial}"
    return len(ledger.read_text().splitlines()) if ledger.exists() else 0


def _report(rows: list[dict[str, Any]]) -> str:
    dups = sum(r["effects"] > 1 for r in rows)
    bad = [r for r in rows if r["effects"] != 1 or not r["agree"]]
    return f"{len(rows)} trials, {dups} duplicated, {len(bad)} wrong; first: {bad[:3]}"


def _settled(store_url: str, trial: int) -> tuple[int, str | None]:
    store = open_store(store_url)
    try:
        record = store.get(f"run-{trial}:call-1")
    finally:
        store.close()
    assert record is not None
    return record.attempts, (record.result or {}).get("outcome")


def test_two_workers_approving_one_paused_call_run_it_once(
    pair: tuple[Worker, Worker, str],
) -> None:
    a, b, store_url = pair
    rows = []
    for trial in range(TRIALS):
        a.send(op="pause", trial=trial)
        assert a.recv()["paused"]
        at = time.time() + 0.03
        for worker in (a, b):
            worker.send(op="resume", trial=trial, value="approve", at=at)
        met = release_when(a.base, trial)
        replies = [a.recv(), b.recv()]
        attempts, outcome = _settled(store_url, trial)
        agree = all(r["ok"] and r["outcome"] == r["state"] == "succeeded" for r in replies)
        rows.append(
            {
                "trial": trial,
                "effects": _effects(a.base, trial),
                "met": met,
                "attempts": attempts,
                "outcome": outcome,
                "agree": agree and outcome == "succeeded" and attempts == 1,
                "replies": replies,
            }
        )
    print(_report(rows))
    assert all(r["effects"] == 1 for r in rows), _report(rows)
    assert all(r["agree"] for r in rows), _report(rows)  # no false unknown, one attempt
    assert all(r["met"] != "timeout" for r in rows), _report(rows)  # every trial raced


def test_a_second_worker_resuming_a_running_thread_does_not_run_it_again(
    pair: tuple[Worker, Worker, str],
) -> None:
    a, b, store_url = pair
    rows = []
    for trial in range(TRIALS):
        a.send(op="run", trial=trial)
        started = a.base / f"invocations-{trial}"
        deadline = time.monotonic() + 60
        while not started.exists():  # the first worker's tool is running now
            assert time.monotonic() < deadline, "the first worker's tool never started"
            time.sleep(0.001)
        b.send(op="resume", trial=trial, input="none", at=0)
        met = release_when(a.base, trial)
        replies = [a.recv(), b.recv()]
        attempts, outcome = _settled(store_url, trial)
        agree = all(r["ok"] and r["outcome"] == r["state"] == "succeeded" for r in replies)
        rows.append(
            {
                "trial": trial,
                "effects": _effects(a.base, trial),
                "met": met,
                "agree": agree and outcome == "succeeded" and attempts == 1,
                "replies": replies,
            }
        )
    print(_report(rows))
    assert all(r["effects"] == 1 for r in rows), _report(rows)
    assert all(r["agree"] for r in rows), _report(rows)
    assert all(r["met"] != "timeout" for r in rows), _report(rows)
