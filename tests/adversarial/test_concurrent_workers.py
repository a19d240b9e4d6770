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
import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.nodes.executor import pipeline, preview, record_lease
from execgraph.nodes.executor.stages.lock import lock_keys
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import CallInProgress, FencedOut
from execgraph.state.lease_keeper import LEASES
from execgraph.state.store import open_store
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.state.store.worker import worker_id
from execgraph.tools import AdapterOutput, InvokeContext, tool_spec
from tests.support.executor import config, make_deps, make_executor, request
from tests.support.workers import Worker, release_when

TRIALS = int(os.environ.get("EXECGRAPH_RACE_TRIALS", "100"))

pytestmark = pytest.mark.timeout(900)


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
        # even trials: a tool with a reconcile probe (it honestly answers "not yet", so a
        # restart ran it twice); odd: none (the success was overwritten by a false unknown)
        a.send(op="pause", trial=trial, tool="pay_unprobed" if trial % 2 else "pay")
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


# -- one process: the owner's lease decides -----------------------------------------------

OTHER = "elsewhere/1/1/feedbeef"  # a worker on another host: only its lease can expire


def _one_write(
    tmp_path: Path,
    ran: list[str],
    *,
    started: threading.Event | None = None,
    go: threading.Event | None = None,
    timeout_s: float = 30.0,
    idempotent: bool = False,
) -> tuple[Any, Any, dict[str, Any]]:
    def reconcile(args: Any, ctx: InvokeContext) -> AdapterOutput:
        return AdapterOutput(committed=bool(ran))

    @tool_spec(
        effect="write",
        reconcile=reconcile,
        retry=None,
        timeout_s=timeout_s,
        idempotent=idempotent,
    )
    def record_payment(line: str) -> str:
        """Record a payment."""
        if started is not None and go is not None:
            started.set()
            assert go.wait(60)
        ran.append(line)
        return "paid"

    deps = make_deps(tmp_path, [record_payment])
    req = request("record_payment", {"line": "pay 1"}, root=tmp_path)
    return deps, make_executor(deps), req


def _claim_as(deps: Any, req: dict[str, Any], owner: str, lease_s: float) -> None:
    authorized = preview(ToolExecutionRequest.model_validate(req), deps)
    deps.store.reserve(
        "run-1:call-1",
        run_id="run-1",
        call_id="call-1",
        tool="record_payment",
        version=authorized.spec.version,
        args_hash=authorized.validated.normalized.args_hash,
        attempt_id="theirs",
        owner=owner,
        lease_s=lease_s,
    )


def test_a_live_owner_elsewhere_is_waited_for_then_reported_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_lease, "LEASE_S", 0.2)  # the wait: the call's timeout plus a lease
    ran: list[str] = []
    deps, app, req = _one_write(tmp_path, ran, timeout_s=0.3)
    _claim_as(deps, req, OTHER, 600.0)
    with pytest.raises(CallInProgress, match=OTHER):
        app.invoke({"request": req}, config())
    assert ran == []
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.owner == OTHER and record.fence == 1


def test_an_expired_lease_elsewhere_is_taken_over_and_stays_unknown(tmp_path: Path) -> None:
    """Its worker stopped renewing but is not proved gone (another host): it may only be
    stalled, and act when it wakes. The probe finds no effect yet, which proves nothing
    about one still to come: the write is not run again, it is unknown."""
    ran: list[str] = []
    deps, app, req = _one_write(tmp_path, ran)
    _claim_as(deps, req, OTHER, 0.0)  # its worker stopped renewing: expired
    out = app.invoke({"request": req}, config())
    result = out["results"]["call-1"]
    assert result["outcome"] == "unknown" and ran == []  # never re-invoked
    assert "may still be running" in result["error"]["message"]
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.fence == 2  # taken over, then committed:
    assert record.state == "committed" and record.owner == ""  # nobody's to run any more


def test_an_expired_lease_elsewhere_runs_an_idempotent_write_again(tmp_path: Path) -> None:
    ran: list[str] = []
    deps, app, req = _one_write(tmp_path, ran, idempotent=True)
    _claim_as(deps, req, OTHER, 0.0)
    out = app.invoke({"request": req}, config())
    assert out["results"]["call-1"]["outcome"] == "succeeded" and ran == ["pay 1"]
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.fence == 2 and record.state == "committed"


def test_a_call_taken_over_twice_frees_the_first_dead_owners_locks(tmp_path: Path) -> None:
    """Worker A died holding the call's lock; worker B took the call over and died before
    its commit. The third worker must not wait out A's lock: its owner is gone too."""
    ran: list[str] = []

    def reconcile(args: Any, ctx: InvokeContext) -> AdapterOutput:
        return AdapterOutput(committed=bool(ran))

    # idempotent: B is a live worker elsewhere, not proved gone, so only an idempotent
    # write is run again after its lease lapsed
    @tool_spec(effect="write", locks=["payments"], reconcile=reconcile, retry=None, idempotent=True)
    def record_payment(line: str) -> str:
        """Record a payment."""
        ran.append(line)
        return "paid"

    deps = make_deps(tmp_path, [record_payment])
    req = request("record_payment", {"line": "pay 1"}, root=tmp_path)
    authorized = preview(ToolExecutionRequest.model_validate(req), deps)
    keys = lock_keys(
        authorized.spec,
        authorized.validated.normalized.arguments,
        ToolExecutionRequest.model_validate(req).workspace,
    )
    child = subprocess.Popen(["true"])
    child.wait()
    first = f"{worker_id().split('/')[0]}/{child.pid}/1/deadbeef|run-1:call-1"  # A: gone
    deps.store.acquire_locks(keys, first, lease_s=600.0, timeout_s=1.0)
    _claim_as(deps, req, OTHER, 0.0)  # B: took it over, then stopped renewing
    out = make_executor(deps).invoke({"request": req}, config())
    assert out["results"]["call-1"]["outcome"] == "succeeded", out["results"]
    assert ran == ["pay 1"]
    with sqlite3.connect(tmp_path / "exec.db") as conn:
        left = conn.execute("SELECT key, owner FROM locks").fetchall()
    assert left == []  # A's lock freed, the call's own released with its commit


def test_the_running_owner_renews_its_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_lease, "LEASE_S", 0.5)
    monkeypatch.setattr(record_lease, "RENEW_EVERY_S", 0.05)
    LEASES.renew_now()  # a keeper already running takes the short period now
    ran: list[str] = []
    started, go = threading.Event(), threading.Event()
    deps, app, req = _one_write(tmp_path, ran, started=started, go=go)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(app.invoke, {"request": req}, config())
        assert started.wait(60)
        first = deps.store.get("run-1:call-1")
        assert first is not None
        deadline = time.monotonic() + 60
        while True:  # wait for a renewal to land, then for the first lease to have expired
            now = deps.store.get("run-1:call-1")
            assert now is not None and time.monotonic() < deadline
            if now.lease_until > first.lease_until and time.time() > first.lease_until:
                break
            time.sleep(0.01)
        other = SqliteExecutionStore(tmp_path / "exec.db")
        try:  # past its first lease, the call is still its owner's
            assert other.take_over("run-1:call-1", OTHER, attempt_id="x", lease_s=1) is None
        finally:
            other.close()
        go.set()
        assert running.result(60)["results"]["call-1"]["outcome"] == "succeeded"
    assert ran == ["pay 1"]


def test_two_threads_of_one_process_approving_one_call_run_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside one process the worker is the same: attempts are told apart by id, so the
    second thread waits for the first one's call instead of taking it for a dead one."""
    paid: list[int] = []
    waiting, go = threading.Event(), threading.Event()

    @tool_spec(effect="irreversible")
    def pay(amount: int) -> str:
        """Pay."""
        assert go.wait(60)
        paid.append(amount)
        return "paid"

    original = pipeline.await_owner

    def await_owner(*args: Any, **kwargs: Any) -> Any:
        waiting.set()
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "await_owner", await_owner)
    deps = make_deps(tmp_path, [pay])
    app = make_executor(deps)
    assert app.invoke({"request": request("pay", {"amount": 3}, root=tmp_path)}, config())[
        "__interrupt__"
    ]
    with ThreadPoolExecutor(2) as pool:
        both = [pool.submit(app.invoke, Command(resume="approve"), config()) for _ in range(2)]
        assert waiting.wait(60)  # one of them found the other's call in flight
        go.set()
        outcomes = [f.result(60)["results"]["call-1"]["outcome"] for f in both]
    assert paid == [3] and outcomes == ["succeeded", "succeeded"]


def test_an_owner_whose_record_was_taken_over_is_told_to_stop_and_cannot_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that stalled past its record's lease and was taken over still runs its
    tool: its next renewal finds the lease gone and sets the call's cancel signal, so the
    tool stops at once (it would otherwise run on for its whole timeout); its commit is
    refused, and the record stays the new owner's."""
    monkeypatch.setattr(record_lease, "RENEW_EVERY_S", 0.05)
    LEASES.renew_now()  # a keeper already running takes the short period now
    started, stopped = threading.Event(), threading.Event()

    @tool_spec(effect="write", retry=None, timeout_s=120)
    def record_payment(line: str, ctx: InvokeContext) -> str:
        """Record a payment, unless told to stop first."""
        started.set()
        if ctx.cancel.wait(60):
            stopped.set()
            return "stopped"
        return "paid"

    deps = make_deps(tmp_path, [record_payment])
    app = make_executor(deps)
    req = request("record_payment", {"line": "pay 1"}, root=tmp_path)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(app.invoke, {"request": req}, config())
        assert started.wait(60)
        other = SqliteExecutionStore(tmp_path / "exec.db")
        try:  # another worker took it over (it held this one's owner for gone)
            taken = other.take_over(
                "run-1:call-1", OTHER, attempt_id="x", lease_s=600, gone=worker_id(), fence=1
            )
        finally:
            other.close()
        assert taken is not None and taken.fence == 2
        assert stopped.wait(10), "the stalled owner was never told its lease was lost"
        with pytest.raises(FencedOut):
            running.result(60)
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.owner == OTHER and record.state == "started"
