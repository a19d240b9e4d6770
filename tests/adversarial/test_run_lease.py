"""Two workers resuming one thread at once cannot both act: the fenced run lease.

Real worker processes (``tests.support.pg_runs.Server``) on one shared state — a
PostgreSQL database (``database=``), or one embedded home (SQLite) — answer the same
paused approval at the same instant. Exactly one runs the payment; the other is told
``RunInProgress`` (who holds the run, until when), or, arriving after the run moved on,
finds it past the approval. The tool itself counts the payments. A worker whose run
lease was taken over (the lease expired deliberately, then taken by another owner)
cannot commit its result: ``FencedOut``, nothing recorded.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.persistence import run_lease
from execgraph.persistence.fenced_saver import FencedSaver
from execgraph.persistence.run_lease import check_run_fence, held_run
from execgraph.state.errors import FencedOut, RunInProgress
from execgraph.state.events import EventType
from execgraph.state.lease_keeper import LEASES
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sql_locks import run_key
from execgraph.state.store.worker import worker_id
from tests.support.pg_runs import Server, build_app, cfg, effects, task

TRIALS = int(os.environ.get("EXECGRAPH_RUN_LEASE_TRIALS", "20"))
OTHER = "elsewhere@boot@1/4242/99/abcdef012345"  # a live worker on another machine


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The shared state: one embedded home, or one PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "home")
    return str(request.getfixturevalue("postgres_database"))


@pytest.fixture
def pair(where: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    a, b = Server(where, tmp_path, "a"), Server(where, tmp_path, "b")
    yield a, b
    a.close()
    b.close()


def _first(servers: tuple[Server, Server], timeout_s: float = 120.0) -> Server:
    """The server that answers first."""
    streams = {s.proc.stdout: s for s in servers}
    ready, _, _ = select.select(list(streams), [], [], timeout_s)
    if not ready:
        raise AssertionError(f"no worker answered within {timeout_s}s")
    return streams[ready[0]]


def _race(a: Server, b: Server, base: Path, thread: str, *, hold: bool) -> list[dict[str, Any]]:
    """Pause ``thread`` (in ``a``), then both approve at one instant; with ``hold`` the
    winner's payment holds until the loser has answered."""
    if hold:
        (base / f"gate-{thread}").touch()
    a.send(op="start", thread=thread)
    assert a.recv() == {"paused": True}
    at = time.time() + 0.2
    a.send(op="approve", thread=thread, at=at)
    b.send(op="approve", thread=thread, at=at)
    if not hold:
        return [a.recv(), b.recv()]
    first = _first((a, b))
    loser = first.recv()  # the winner is holding in its payment: this one met the lease
    (base / f"go-{thread}").touch()
    winner = (b if first is a else a).recv()
    return [loser, winner]


@pytest.mark.timeout(900)
def test_two_processes_racing_on_one_paused_approval_only_one_acts(
    pair: tuple[Server, Server], tmp_path: Path
) -> None:
    a, b = pair
    tally = {"in_progress": 0, "past_approval": 0, "duplicates": 0}
    for trial in range(TRIALS):
        for hold in (True, False):
            thread = f"race-{trial}-{'held' if hold else 'free'}"
            replies = _race(a, b, tmp_path, thread, hold=hold)
            acted = [r for r in replies if r.get("status") == "COMPLETED"]
            refused = [r for r in replies if r.get("error") == "RunInProgress"]
            assert len(acted) + len(refused) == 2, replies
            assert acted, replies
            if hold:
                assert refused and "is being run by worker" in refused[0]["message"], replies
            tally["in_progress"] += len(refused)
            tally["past_approval"] += len(acted) - 1
            tally["duplicates"] += max(effects(tmp_path, thread) - 1, 0)
            assert effects(tmp_path, thread) == 1, (thread, replies)
    print(f"run-lease race, {TRIALS * 2} trials: {tally}")
    assert tally["duplicates"] == 0
    assert tally["in_progress"] >= TRIALS  # every held trial met the lease


def _store(app: Any) -> ExecutionStore:
    store: ExecutionStore = app.run_store
    return store


def _expire(store: ExecutionStore, thread: str) -> None:
    """Let ``thread``'s lease lapse now, as a worker stalled past it would see."""
    table = "execgraph_locks" if type(store).__name__.startswith("Postgres") else "locks"
    mark = "%s" if table.startswith("execgraph") else "?"
    sql = f"UPDATE {table} SET lease_until = 0 WHERE key = {mark}"
    store._tx("expire a run lease", lambda cur: cur.execute(sql, (run_key(thread),)))  # type: ignore[attr-defined]


@pytest.mark.timeout(300)
def test_a_run_lease_taken_over_and_released_is_lost_for_good_and_fences_checkpoints(
    where: str, tmp_path: Path
) -> None:
    app = build_app(where, tmp_path)
    store = _store(app)
    thread = "retaken"
    app.invoke(task(thread), cfg(thread))  # paused: a checkpoint to write again
    saved = app.checkpointer.get_tuple(cfg(thread))
    assert saved is not None
    fenced = FencedSaver(app.checkpointer, store)
    with held_run(store, thread):
        lease = LEASES.lease(("run", id(store), thread))
        assert lease is not None
        check_run_fence(store, thread)  # held: nothing refused
        fenced.put(saved.config, saved.checkpoint, saved.metadata, {})
        # this worker stalls past its lease; another takes the run, finishes, releases it
        _expire(store, thread)
        assert store.lease_run(thread, OTHER, lease_s=60).owner == OTHER
        store.release_run(thread, OTHER)
        with pytest.raises(FencedOut, match="taken over"):  # asks the store: stalled long
            lease.confirmed_at = 0.0
            check_run_fence(store, thread)
        LEASES.renew_now()  # woken: its renewal finds the lease gone, never takes it back
        deadline = time.monotonic() + 30
        while not lease.lost:
            assert time.monotonic() < deadline, "the renewal never found the lease lost"
            time.sleep(0.01)
        assert store.lease_run_holder(thread) == OTHER
        before = len(list(app.checkpointer.list(cfg(thread))))
        with pytest.raises(FencedOut):
            fenced.put(saved.config, saved.checkpoint, saved.metadata, {})
        with pytest.raises(FencedOut):
            fenced.put_writes(saved.config, [("x", 1)], "task")
        assert len(list(app.checkpointer.list(cfg(thread)))) == before


@pytest.mark.timeout(300)
def test_a_worker_whose_run_lease_was_taken_over_cannot_commit(where: str, tmp_path: Path) -> None:
    app = build_app(where, tmp_path)
    store = _store(app)
    thread = "fenced"
    (tmp_path / f"gate-{thread}").touch()
    assert app.invoke(task(thread), cfg(thread))["__interrupt__"]
    raised: list[BaseException] = []

    def resume() -> None:
        try:
            app.invoke(Command(resume="approve"), cfg(thread))
        except BaseException as exc:
            raised.append(exc)

    runner = threading.Thread(target=resume)
    runner.start()
    deadline = time.monotonic() + 60
    while not (tmp_path / f"paying-{thread}").exists():  # the payment is under way
        assert time.monotonic() < deadline
        time.sleep(0.005)
    # while it holds: nobody else may take the run
    assert store.lease_run(thread, OTHER, lease_s=60).owner == worker_id()
    _expire(store, thread)
    assert store.lease_run(thread, OTHER, lease_s=60).owner == OTHER  # taken over
    (tmp_path / f"go-{thread}").touch()
    runner.join(60)
    assert len(raised) == 1 and isinstance(raised[0], FencedOut), raised
    assert "taken over by worker" in str(raised[0]) and OTHER in str(raised[0])
    # nothing applied: the record is still in flight, no commit was logged
    assert store.committed(thread) == []
    [pending] = store.pending(thread)
    assert pending.tool == "pay"
    kinds = {e.type for e in store.events(thread)}
    assert EventType.TOOL_RESOLVED in kinds
    assert EventType.TOOL_STARTED in kinds  # logged before the tool ran: it did start
    assert not kinds & {EventType.TOOL_OUTPUT, EventType.TOOL_COMPLETED}
    # the new owner still holds the run: this worker cannot resume it either
    with pytest.raises(RunInProgress, match=OTHER.split("/")[0]):
        app.invoke(Command(resume="approve"), cfg(thread))


@pytest.mark.timeout(300)
def test_a_second_call_of_a_running_thread_in_one_process_is_refused(
    where: str, tmp_path: Path
) -> None:
    app = build_app(where, tmp_path)
    thread = "twice"
    (tmp_path / f"gate-{thread}").touch()
    app.invoke(task(thread), cfg(thread))
    runner = threading.Thread(target=lambda: app.invoke(Command(resume="approve"), cfg(thread)))
    runner.start()
    deadline = time.monotonic() + 60
    while not (tmp_path / f"paying-{thread}").exists():
        assert time.monotonic() < deadline
        time.sleep(0.005)
    with pytest.raises(RunInProgress, match="is being run by worker"):
        app.invoke(Command(resume="approve"), cfg(thread))
    (tmp_path / f"go-{thread}").touch()
    runner.join(60)
    assert effects(tmp_path, thread) == 1
    assert app.get_state(cfg(thread)).values["status"] == "COMPLETED"


def test_a_lease_is_taken_from_a_dead_owner_at_once_never_from_a_live_one(
    where: str, tmp_path: Path
) -> None:
    store = _store(build_app(where, tmp_path))
    dead = subprocess.run(
        [
            sys.executable,
            "-c",
            "from execgraph.state.store.worker import worker_id as w; print(w())",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    ).stdout.strip()
    assert store.lease_run("crashed", dead, lease_s=600).owner == dead
    taken = store.lease_run("crashed", worker_id(), lease_s=30)
    assert taken.owner == worker_id()  # its process is gone: no need to wait 600 s
    assert store.lease_run("live", OTHER, lease_s=600).owner == OTHER
    held = store.lease_run("live", worker_id(), lease_s=30)
    assert held.owner == OTHER and held.lease_until > time.time() + 500
    store.release_run("live", worker_id())  # not its lease: untouched
    assert store.lease_run("live", worker_id(), lease_s=30).owner == OTHER
    store.release_run("live", OTHER)
    assert store.lease_run("live", worker_id(), lease_s=30).owner == worker_id()


@pytest.mark.timeout(300)
def test_a_running_lease_is_renewed_while_the_run_goes_on(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build_app(where, tmp_path)
    store = _store(app)
    thread = "renewed"
    (tmp_path / f"gate-{thread}").touch()
    app.invoke(task(thread), cfg(thread))
    runner = threading.Thread(target=lambda: app.invoke(Command(resume="approve"), cfg(thread)))
    runner.start()
    deadline = time.monotonic() + 60
    while not (tmp_path / f"paying-{thread}").exists():
        assert time.monotonic() < deadline
        time.sleep(0.005)
    first = store.lease_run(thread, OTHER, lease_s=1).lease_until  # held: tells the holder's
    monkeypatch.setattr(run_lease, "RUN_LEASE_S", 3600.0)
    LEASES.renew_now()
    while store.lease_run(thread, OTHER, lease_s=1).lease_until < first + 1000:
        assert time.monotonic() < deadline, "the ticker never renewed the run lease"
        time.sleep(0.01)
    (tmp_path / f"go-{thread}").touch()
    runner.join(60)
    assert app.get_state(cfg(thread)).values["status"] == "COMPLETED"
    # released when the call returned: another worker may take the thread now
    assert store.lease_run(thread, OTHER, lease_s=60).owner == OTHER


@pytest.mark.timeout(300)
def test_a_thread_held_elsewhere_is_refused_at_once_on_every_entry_that_runs_it(
    where: str, tmp_path: Path
) -> None:
    import asyncio

    app = build_app(where, tmp_path)
    store = _store(app)
    app.invoke(task("held"), cfg("held"))
    assert store.lease_run("held", OTHER, lease_s=600).owner == OTHER
    with pytest.raises(RunInProgress, match="is being run by worker elsewhere"):
        app.invoke(Command(resume="approve"), cfg("held"))
    with pytest.raises(RunInProgress):
        list(app.stream(Command(resume="approve"), cfg("held")))
    with pytest.raises(RunInProgress):
        asyncio.run(app.ainvoke(Command(resume="approve"), cfg("held")))
    assert effects(tmp_path, "held") == 0
    # reading the run needs no lease
    assert app.get_state(cfg("held")).next
    store.release_run("held", OTHER)
    out = asyncio.run(app.ainvoke(Command(resume="approve"), cfg("held")))
    assert out["status"] == "COMPLETED" and effects(tmp_path, "held") == 1
