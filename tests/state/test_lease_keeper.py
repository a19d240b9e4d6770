"""The lease keeper: one thread renews every lease, a lost lease is told and never taken
back, a lease is renewed only once started, and a forked child holds nothing."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import pytest

from execgraph.state.errors import StoreError
from execgraph.state.lease_keeper import LeaseKeeper

_WAIT_S = 10.0


@dataclass(eq=False)
class _Store:
    """Stands in for the store's side of one kind of lease: it holds ``held`` and logs
    each renewal (the keys it was asked to renew)."""

    held: set[str] = field(default_factory=set)
    renewals: list[list[str]] = field(default_factory=list)
    down: bool = False
    renewed: threading.Condition = field(default_factory=threading.Condition)

    def wait_renewals(self, n: int) -> list[list[str]]:
        with self.renewed:
            assert self.renewed.wait_for(lambda: len(self.renewals) >= n, _WAIT_S)
            return list(self.renewals)


@dataclass(frozen=True)
class _Renewer:
    store: _Store
    every_s: float = 0.01

    def renew(self, targets: Sequence[str]) -> Collection[str]:
        with self.store.renewed:
            self.store.renewals.append(sorted(targets))
            self.store.renewed.notify_all()
        if self.store.down:
            raise StoreError("the store is out of reach")
        return [t for t in targets if t in self.store.held]


def _lease_threads() -> int:
    return sum(t.name == "execgraph-leases" for t in threading.enumerate())


def test_one_thread_renews_every_lease_one_call_per_kind_and_store() -> None:
    keeper, before = LeaseKeeper(), _lease_threads()
    stores = [_Store(held={f"k{i}" for i in range(50)}) for _ in range(3)]
    for n, store in enumerate(stores):
        for i in range(50):
            assert keeper.hold((n, i), f"k{i}", _Renewer(store)) is not None
    assert _lease_threads() == before + 1  # 150 leases, three stores: one thread
    assert keeper.count() == 150 and keeper.count(_Renewer) == 150
    for store in stores:
        n = len(store.wait_renewals(1))  # one may have started while the leases were held
        last = store.wait_renewals(n + 2)[-1]  # begun once all were held
        assert last == sorted(f"k{i}" for i in range(50))  # all of them in one renewal
    assert _lease_threads() == before + 1


def test_a_lease_is_renewed_only_once_started_and_no_more_once_released() -> None:
    keeper, store = LeaseKeeper(), _Store(held={"a", "b"})
    renewer = _Renewer(store)
    waiting = keeper.hold("a", "a", renewer, renewing=False)
    assert waiting is not None and keeper.holds("a")
    running = keeper.hold("b", "b", renewer)
    assert running is not None
    assert keeper.hold("b", "b", renewer) is None  # held here already
    assert "a" not in store.wait_renewals(2)[-1]
    waiting.start()
    n = len(store.wait_renewals(1))
    assert store.wait_renewals(n + 2)[-1] == ["a", "b"]
    running.release()
    assert not keeper.holds("b")
    n = len(store.wait_renewals(1))
    assert store.wait_renewals(n + 2)[-1] == ["a"]
    assert keeper.hold("b", "b", renewer) is not None  # free to hold again


def test_a_lease_the_store_no_longer_grants_is_lost_told_once_and_never_renewed() -> None:
    keeper, store = LeaseKeeper(), _Store(held={"mine", "taken"})
    renewer = _Renewer(store)
    told: list[str] = []
    lost = threading.Event()

    def on_lost() -> None:
        told.append("taken")
        lost.set()

    mine = keeper.hold("mine", "mine", renewer)
    taken = keeper.hold("taken", "taken", renewer, on_lost=on_lost)
    assert mine is not None and taken is not None
    store.held.discard("taken")  # another worker took it over
    assert lost.wait(_WAIT_S)
    assert taken.lost and not taken.renewing and not mine.lost
    n = len(store.wait_renewals(1))
    assert store.wait_renewals(n + 3)[-1] == ["mine"]  # not taken back
    store.held.add("taken")  # even once the store would grant it again
    n = len(store.wait_renewals(1))
    assert store.wait_renewals(n + 3)[-1] == ["mine"]
    assert told == ["taken"]
    assert keeper.holds("taken")  # its holder still runs until it releases it
    taken.release()
    assert not keeper.holds("taken")


def test_a_store_that_cannot_answer_loses_no_lease() -> None:
    keeper, store = LeaseKeeper(), _Store(held={"a"}, down=True)
    told: list[str] = []
    lease = keeper.hold("a", "a", _Renewer(store), on_lost=lambda: told.append("a"))
    assert lease is not None
    store.held.clear()  # what it would say, if it could
    store.wait_renewals(5)
    assert told == [] and not lease.lost


def test_renew_now_renews_at_once() -> None:
    keeper, store = LeaseKeeper(), _Store(held={"a"})
    assert keeper.hold("a", "a", _Renewer(store, every_s=3600.0)) is not None
    time.sleep(0.05)
    assert store.renewals == []  # its first renewal is an hour away
    keeper.renew_now()
    assert store.wait_renewals(1) == [["a"]]


@pytest.mark.integration  # it forks a process
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_holds_none_of_its_parents_leases() -> None:
    keeper, store = LeaseKeeper(), _Store(held={"a", "b"})
    assert keeper.hold("a", "a", _Renewer(store)) is not None
    store.wait_renewals(1)
    child = os.fork()
    if child == 0:  # the child: a new worker
        code = 1
        try:
            fresh = keeper.count() == 0 and not keeper.holds("a")
            mine = _Store(held={"b"})
            held = keeper.hold("b", "b", _Renewer(mine)) is not None
            renewed = mine.wait_renewals(1) == [["b"]]  # its own thread renews it
            code = 0 if fresh and held and renewed else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert keeper.holds("a")  # the parent's lease is the parent's still
