"""One conformance suite for every ExecutionStore backend (real SQLite file, real PostgreSQL).

Each test opens stores through ``open_store`` with a URL, the way the runtime does, and
checks the Protocol's docstring contract: idempotent reservation, first commit wins,
all-or-nothing leased locks, deduplicated ordered events, content-addressed artifacts and
single-use approval tokens, also under thread and process races.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import overload

import pytest

from execgraph.state.errors import LockTimeout, StoreError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store import ExecutionStore, Reservation, open_store
from tests.state.store.store_helpers import Opener, reserve

ROOT = Path(__file__).resolve().parents[3]


def test_backend_satisfies_protocol(store: ExecutionStore) -> None:
    assert isinstance(store, ExecutionStore)


# -- execution records --------------------------------------------------------------


def test_reserve_is_fresh_once_and_returns_the_existing_record(store: ExecutionStore) -> None:
    first = reserve(store)
    assert first.fresh
    rec = first.record
    assert (rec.idempotency_key, rec.run_id, rec.call_id, rec.tool) == (
        "k1",
        "run-1",
        "call-1",
        "write_note",
    )
    assert (rec.version, rec.args_hash, rec.attempt_id) == ("1.0.0", "sha256:abc", "att-1")
    assert (rec.state, rec.attempts, rec.result) == ("started", 1, None)
    assert rec.created_at == rec.updated_at

    again = reserve(store, attempt_id="att-2")
    assert not again.fresh
    assert again.record == rec
    assert store.get("k1") == rec
    assert store.get("missing") is None


def test_commit_then_reserve_returns_committed_result(store: ExecutionStore) -> None:
    reserve(store)
    result = {"outcome": "succeeded", "data": {"n": 1, "items": ["a", None, 2.5]}}
    committed = store.commit("k1", result)
    assert committed.state == "committed"
    assert committed.result == result
    assert committed.updated_at >= committed.created_at

    again = reserve(store, attempt_id="att-9")
    assert not again.fresh
    assert again.record == committed
    assert store.get("k1") == committed


def test_first_commit_wins(store: ExecutionStore) -> None:
    reserve(store)
    e1 = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="call-1", attempt_id="a1")
    e2 = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="call-1", attempt_id="a2")
    first = store.commit("k1", {"v": 1}, events=[e1])
    second = store.commit("k1", {"v": 2}, events=[e2])
    assert second == first
    assert store.get("k1") == first
    assert [e.event_id for e in store.events("run-1")] == [e1.event_id]


def test_commit_without_reservation_is_a_store_error(store: ExecutionStore) -> None:
    with pytest.raises(StoreError):
        store.commit("never-reserved", {"v": 1})
    assert store.get("never-reserved") is None


def test_commit_is_one_transaction_with_events_and_lock_release(
    store: ExecutionStore, open_new: Opener
) -> None:
    reserve(store)
    store.acquire_locks(["file:a", "file:b"], "worker-1", lease_s=60, timeout_s=0)
    ev = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="call-1")
    store.commit("k1", {"v": 1}, events=[ev], release=["file:a", "file:b"], owner="worker-1")
    other = open_new()
    other.acquire_locks(["file:a", "file:b"], "worker-2", lease_s=60, timeout_s=0)
    assert other.events("run-1") == [ev]
    assert other.get("k1") is not None and other.get("k1").state == "committed"  # type: ignore[union-attr]


def test_pending_survives_reopen_and_filters_by_run(
    store: ExecutionStore, open_new: Opener
) -> None:
    reserve(store, "k1", run_id="run-1")
    reserve(store, "k2", run_id="run-2")
    reserve(store, "k3", run_id="run-1")
    store.commit("k3", {"v": 3})
    store.close()

    after_crash = open_new()
    assert [r.idempotency_key for r in after_crash.pending()] == ["k1", "k2"]
    assert [r.idempotency_key for r in after_crash.pending("run-1")] == ["k1"]
    assert after_crash.pending("run-x") == []
    assert all(r.state == "started" for r in after_crash.pending())


def test_restart_bumps_attempt_and_is_idempotent(store: ExecutionStore) -> None:
    reserve(store)
    restarted = store.restart("k1", "att-2")
    assert (restarted.attempt_id, restarted.attempts, restarted.state) == ("att-2", 2, "started")
    assert store.restart("k1", "att-2") == restarted  # a replayed restart counts once
    assert store.restart("k1", "att-3").attempts == 3
    assert store.get("k1") is not None and store.get("k1").attempt_id == "att-3"  # type: ignore[union-attr]


def test_restart_refuses_unknown_and_committed(store: ExecutionStore) -> None:
    with pytest.raises(StoreError):
        store.restart("missing", "att-2")
    reserve(store)
    committed = store.commit("k1", {"v": 1})
    with pytest.raises(StoreError):
        store.restart("k1", "att-2")
    assert store.get("k1") == committed


def test_result_must_be_json(store: ExecutionStore) -> None:
    reserve(store)
    with pytest.raises(StoreError):
        store.commit("k1", {"bad": object()})
    assert store.get("k1") is not None and store.get("k1").state == "started"  # type: ignore[union-attr]


class _FailsMidway(Sequence[Event]):
    """An event list whose second item cannot be read: a fault in the middle of commit."""

    def __init__(self, first: Event) -> None:
        self._first = first

    def __len__(self) -> int:
        return 2

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if index == 0:
            return self._first
        raise RuntimeError("injected fault")


def test_failed_commit_changes_nothing(store: ExecutionStore, open_new: Opener) -> None:
    reserve(store)
    store.acquire_locks(["file:a"], "worker-1", lease_s=60, timeout_s=0)
    ev = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="call-1")
    with pytest.raises(RuntimeError, match="injected"):
        store.commit("k1", {"v": 1}, events=_FailsMidway(ev), release=["file:a"], owner="worker-1")
    other = open_new()
    assert other.get("k1") is not None and other.get("k1").state == "started"  # type: ignore[union-attr]
    assert other.events("run-1") == []
    with pytest.raises(LockTimeout):
        other.acquire_locks(["file:a"], "worker-2", lease_s=60, timeout_s=0)
    assert store.commit("k1", {"v": 1}, events=[ev]).state == "committed"  # still usable


def test_text_survives_round_trip(store: ExecutionStore, open_new: Opener) -> None:
    text = 'nul\x00 ünïcödé 🚀 "quoted" \\ back'
    reserve(store)
    store.commit("k1", {"stdout": text, "n": 1.0000000000000002})
    ev = make_event(EventType.TOOL_OUTPUT, "run-1", call_id="call-1", payload={"chunk": text})
    store.append_events([ev])
    reader = open_new()
    assert reader.get("k1") is not None
    assert reader.get("k1").result == {"stdout": text, "n": 1.0000000000000002}  # type: ignore[union-attr]
    assert reader.events("run-1") == [ev]


# -- locks --------------------------------------------------------------------------


def test_locks_are_all_or_nothing(store: ExecutionStore) -> None:
    store.acquire_locks(["b"], "A", lease_s=60, timeout_s=0)
    with pytest.raises(LockTimeout):
        store.acquire_locks(["a", "b", "c"], "B", lease_s=60, timeout_s=0)
    # B got nothing: "a" and "c" are free for a third owner.
    store.acquire_locks(["c", "a"], "C", lease_s=60, timeout_s=0)


def test_expired_lease_can_be_taken_over(store: ExecutionStore) -> None:
    store.acquire_locks(["ws:1"], "A", lease_s=0, timeout_s=0)
    store.acquire_locks(["ws:1"], "B", lease_s=60, timeout_s=0)
    with pytest.raises(LockTimeout):
        store.acquire_locks(["ws:1"], "A", lease_s=60, timeout_s=0)


def test_reacquire_by_owner_renews_lease(store: ExecutionStore) -> None:
    store.acquire_locks(["ws:1"], "A", lease_s=0, timeout_s=0)
    store.acquire_locks(["ws:1", "ws:1"], "A", lease_s=60, timeout_s=0)
    with pytest.raises(LockTimeout):
        store.acquire_locks(["ws:1"], "B", lease_s=60, timeout_s=0)


def test_release_touches_only_own_locks(store: ExecutionStore) -> None:
    store.acquire_locks(["x", "y"], "A", lease_s=60, timeout_s=0)
    store.release_locks(["x", "y"], "B")
    with pytest.raises(LockTimeout):
        store.acquire_locks(["x"], "B", lease_s=60, timeout_s=0)
    store.release_locks(["x"], "A")
    store.acquire_locks(["x"], "B", lease_s=60, timeout_s=0)
    with pytest.raises(LockTimeout):
        store.acquire_locks(["y"], "B", lease_s=60, timeout_s=0)
    store.release_locks([], "A")  # nothing to release is fine


def test_lock_timeout_is_a_store_error_after_polling(store: ExecutionStore) -> None:
    store.acquire_locks(["db:lane"], "A", lease_s=60, timeout_s=0)
    with pytest.raises(StoreError) as info:
        store.acquire_locks(["db:lane"], "B", lease_s=60, timeout_s=0.2)
    assert isinstance(info.value, LockTimeout)
    assert "db:lane" in info.value.message


def test_waiter_gets_lock_once_released(store: ExecutionStore, open_new: Opener) -> None:
    store.acquire_locks(["ws:1"], "A", lease_s=60, timeout_s=0)
    waiter = open_new()
    waiting = threading.Event()

    def wait_for_lock() -> None:
        waiting.set()
        waiter.acquire_locks(["ws:1"], "B", lease_s=60, timeout_s=120)

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(wait_for_lock)
        waiting.wait()
        store.release_locks(["ws:1"], "A")
        future.result()
    with pytest.raises(LockTimeout):
        store.acquire_locks(["ws:1"], "A", lease_s=60, timeout_s=0)


def test_threads_racing_for_a_lock_one_wins(open_new: Opener) -> None:
    stores = [open_new() for _ in range(4)]
    barrier = threading.Barrier(8)

    def grab(i: int) -> bool:
        barrier.wait()
        try:
            stores[i % 4].acquire_locks(["hot", f"own-{i}"], f"o{i}", lease_s=60, timeout_s=0)
        except LockTimeout:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(grab, range(8)))
    assert wins.count(True) == 1


# -- concurrency --------------------------------------------------------------------


def test_threads_racing_to_reserve_one_fresh(open_new: Opener) -> None:
    stores = [open_new() for _ in range(3)]
    barrier = threading.Barrier(12)

    def race(i: int) -> Reservation:
        barrier.wait()
        return reserve(stores[i % 3], "hot", attempt_id=f"att-{i}")

    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(race, range(12)))
    fresh = [o for o in outcomes if o.fresh]
    assert len(fresh) == 1
    assert {o.record.attempt_id for o in outcomes} == {fresh[0].record.attempt_id}


def test_threads_racing_to_commit_first_wins(store: ExecutionStore) -> None:
    reserve(store)
    barrier = threading.Barrier(8)

    def race(i: int) -> dict[str, object] | None:
        done = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="c1", attempt_id=f"a{i}")
        barrier.wait()
        return store.commit("k1", {"winner": i}, events=[done]).result

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(race, range(8)))
    assert len({str(r) for r in results}) == 1
    assert store.get("k1") is not None and store.get("k1").result == results[0]  # type: ignore[union-attr]
    [logged] = store.events("run-1")  # only the winner's commit appended its event
    assert logged.attempt_id == f"a{results[0]['winner']}"  # type: ignore[index]


_RACER = """
import os, sys, time
from execgraph.state.store import open_store
url, go, idx = sys.argv[1:]
store = open_store(url)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
r = store.reserve("hot", run_id="r", call_id="c", tool="t", version="1",
                  args_hash="h", attempt_id="att-" + idx)
print("fresh" if r.fresh else "existing", r.record.attempt_id, flush=True)
store.close()
"""


@pytest.mark.integration
def test_processes_racing_to_reserve_one_fresh(store_url: str, tmp_path: Path) -> None:
    open_store(store_url).close()  # create the layout once, as a deployment would
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, store_url, str(go), str(i)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    lines = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        lines.append(out.split())
    assert [line[0] for line in lines].count("fresh") == 1
    assert len({line[1] for line in lines}) == 1


@pytest.mark.integration
def test_postgres_unreachable_is_a_store_error_without_the_dsn() -> None:
    from execgraph.state.store.postgres import PostgresExecutionStore

    with pytest.raises(StoreError) as info:
        PostgresExecutionStore(
            "postgresql://user:s3cret@127.0.0.1:1/nowhere", connect_timeout_s=0.5
        )
    assert "s3cret" not in info.value.message


def test_the_store_has_one_clock_for_every_worker(store: ExecutionStore) -> None:
    """An approval's expiry is stamped and judged by the store's clock (PostgreSQL's
    server's; an embedded home's machine's), read in one short transaction."""
    before = time.time()
    now = store.clock()
    assert isinstance(now, float) and abs(now - before) < 60
    assert store.clock() >= now


def test_events_of_some_types_only_in_append_order(store: ExecutionStore) -> None:
    """A reader that needs a few kinds of event (provenance) reads only those."""
    made = [
        make_event(EventType.RUN_ADMITTED, "run-t", payload={"goal": "g"}),
        make_event(EventType.TOOL_REQUESTED, "run-t", call_id="c1"),
        make_event(EventType.TOOL_COMPLETED, "run-t", call_id="c1"),
        make_event(EventType.TOOL_REQUESTED, "run-t", call_id="c2"),
    ]
    store.append_events(made)
    kinds = (EventType.TOOL_REQUESTED, EventType.RUN_ADMITTED)
    assert [e.event_id for e in store.events("run-t", types=kinds)] == [
        made[0].event_id,
        made[1].event_id,
        made[3].event_id,
    ]
    assert [e.call_id for e in store.events("run-t", call_id="c1", types=kinds)] == ["c1"]
    assert store.events("run-t", types=()) == []
    assert len(store.events("run-t")) == 4
