"""The process's leases in the execution store, renewed from one thread.

A worker holds three kinds of lease in the store: a run's (one worker runs a thread at a
time), a call's execution record's (one worker runs a call), and the resource locks of a
call whose tool ignored its stop signal and still runs. Each lasts a fixed time unless it
is renewed, so a crashed worker's leases lapse by themselves. :data:`LEASES` renews them
all: one daemon thread for the process, started with its first lease and idle while it
holds none. Each kind of lease says how often and how it is renewed (a :class:`Renewer`,
one store round trip for all its leases at once).

A renewal that finds a lease gone (another worker took it over while this one stalled)
stops renewing it — a lost lease is never taken back — and calls its ``on_lost``, so the
holder hears it while it still runs: a call whose record lease is lost is cancelled. A
renewal the store cannot answer (an :class:`~execgraph.state.errors.ExecGraphError`)
keeps every lease and tries again at the next period: a store briefly down only lets the
leases run shorter.

A forked child is a new worker: it holds none of its parent's leases, and every keeper
starts afresh there (``os.register_at_fork``), whichever thread held its lock at the fork.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from execgraph.state.diagnostics import logger
from execgraph.state.errors import ExecGraphError

__all__ = ["LEASES", "Lease", "LeaseKeeper", "Renewer"]

T = TypeVar("T", bound=Hashable)

_IDLE_S = 3600.0  # how long the thread sleeps with nothing to renew (a hold wakes it)
_log = logger("leases")


class Renewer(Protocol[T]):
    """How one kind of lease in one store is renewed.

    Renewers are compared by value: the leases of equal renewers (one kind, one store) are
    renewed together, in one call of :meth:`renew` per period.
    """

    @property
    def every_s(self) -> float:
        """Seconds between two renewals (read at each renewal)."""
        ...

    def renew(self, targets: Sequence[T]) -> Collection[T]:
        """Renew the leases on ``targets``; return those still held.

        Raises:
            ExecGraphError: the store cannot say now (every lease is kept).
        """
        ...


@dataclass(eq=False)
class Lease(Generic[T]):
    """One lease this process holds: registered under a unique ``key``, renewed on
    ``target`` by its ``renewer`` while :attr:`renewing`.

    Attributes:
        key: Unique among the keeper's leases (a second hold of it is refused).
        target: What the renewer renews (a record key, a thread id, a set of locks).
        renewer: How it is renewed.
        on_lost: Called once, from the keeper's thread, when a renewal finds it gone.
        renewing: Renewed at each period (a lease is held before its store row exists).
        lost: A renewal found it gone; it is no longer renewed.
        confirmed_at: When (``time.monotonic``) the store last granted or renewed it, as
            of just before asking: until one lease period after it, nobody else can hold
            it (0: never confirmed here; its holder :meth:`confirm` s a grant).
    """

    key: Hashable
    target: T
    renewer: Renewer[T]
    on_lost: Callable[[], None] | None = None
    renewing: bool = False
    lost: bool = False
    confirmed_at: float = 0.0
    _keeper: LeaseKeeper | None = field(default=None, repr=False)

    def confirm(self, at: float) -> None:
        """The store granted it, as asked at ``at`` (``time.monotonic``)."""
        self.confirmed_at = max(self.confirmed_at, at)

    def start(self, on_lost: Callable[[], None] | None = None) -> None:
        """Renew it from now on (its store row exists); ``on_lost`` replaces the callback."""
        if self._keeper is not None:
            self._keeper._start(self, on_lost)

    def release(self) -> None:
        """Stop holding it (idempotent); the store row is the caller's to release."""
        if self._keeper is not None:
            self._keeper._release(self)


class LeaseKeeper:
    """Holds leases and renews them from one daemon thread (see the module docstring)."""

    def __init__(self) -> None:
        self._reset()
        _KEEPERS.add(self)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._leases: dict[Hashable, Lease[Any]] = {}
        self._due: dict[Renewer[Any], float] = {}  # when each renewer next renews (monotonic)
        self._wake_at = float("inf")  # when the thread wakes on its own
        self._thread: threading.Thread | None = None

    def hold(
        self,
        key: Hashable,
        target: T,
        renewer: Renewer[T],
        *,
        on_lost: Callable[[], None] | None = None,
        renewing: bool = True,
    ) -> Lease[T] | None:
        """Hold a lease under ``key`` (None: this process already holds that key).

        With ``renewing`` False it is only registered (:meth:`holds` says so) until
        :meth:`Lease.start`: a lease taken before its store row exists must not be renewed
        yet, or the first renewal would find it gone.
        """
        lease = Lease(key, target, renewer, on_lost, _keeper=self)
        with self._cond:
            if key in self._leases:
                return None
            self._leases[key] = lease
        if renewing:
            self._start(lease, on_lost)
        return lease

    def lease(self, key: Hashable) -> Lease[Any] | None:
        """The lease this process holds under ``key`` (None: none)."""
        with self._cond:
            return self._leases.get(key)

    def holds(self, key: Hashable) -> bool:
        """Whether this process holds a lease under ``key`` (renewed, lost or not yet)."""
        with self._cond:
            return key in self._leases

    def count(self, kind: type | None = None) -> int:
        """How many leases are held (only those whose renewer is a ``kind``)."""
        with self._cond:
            if kind is None:
                return len(self._leases)
            return sum(isinstance(lease.renewer, kind) for lease in self._leases.values())

    def renew_now(self) -> None:
        """Renew every lease at once, and time the next renewals from now."""
        with self._cond:
            self._due = dict.fromkeys(self._due, 0.0)
            self._wake_at = 0.0
            self._cond.notify_all()

    def _start(self, lease: Lease[Any], on_lost: Callable[[], None] | None) -> None:
        with self._cond:
            if self._leases.get(lease.key) is not lease:
                return  # released meanwhile
            if on_lost is not None:
                lease.on_lost = on_lost
            lease.renewing = True
            renewer = lease.renewer
            if renewer not in self._due:
                # A kind first seen: due one period from now. Known kinds keep their
                # schedule, so a short call costs a dict entry, never a thread switch.
                due = time.monotonic() + renewer.every_s
                self._due[renewer] = due
                if due < self._wake_at:
                    self._wake_at = due
                    self._cond.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="execgraph-leases", daemon=True
                )
                self._thread.start()

    def _release(self, lease: Lease[Any]) -> None:
        with self._cond:
            if self._leases.get(lease.key) is lease:
                del self._leases[lease.key]
            lease.renewing = False

    def _loop(self) -> None:
        while True:
            batches = self._take_due()
            for renewer, leases in batches.items():
                self._renew(renewer, leases)
            with self._cond:
                wait_s = self._wake_at - time.monotonic()
                if wait_s > 0:
                    self._cond.wait(timeout=wait_s)

    def _take_due(self) -> dict[Renewer[Any], list[Lease[Any]]]:
        """The leases due for renewal, by renewer; reschedules their renewers."""
        with self._cond:
            now = time.monotonic()
            active: dict[Renewer[Any], list[Lease[Any]]] = {}
            for lease in self._leases.values():
                if lease.renewing and not lease.lost:
                    active.setdefault(lease.renewer, []).append(lease)
            batches = {}
            for renewer, due in list(self._due.items()):
                if renewer not in active:
                    del self._due[renewer]  # nothing of its kind held: forget it
                elif due <= now:
                    batches[renewer] = active[renewer]
                    self._due[renewer] = now + renewer.every_s
            self._wake_at = min(self._due.values(), default=now + _IDLE_S)
            return batches

    def _renew(self, renewer: Renewer[Any], leases: list[Lease[Any]]) -> None:
        asked = time.monotonic()
        try:
            held = set(renewer.renew([lease.target for lease in leases]))
        except ExecGraphError:
            return  # the store cannot say now: kept, tried again next period
        except Exception:  # a bug in one renewer must not stop every other renewal
            _log.exception("renewing %d lease(s) with %r failed", len(leases), renewer)
            return
        lost = []
        with self._cond:
            for lease in leases:
                if lease.target in held:
                    lease.confirm(asked)
                elif self._leases.get(lease.key) is lease:
                    lease.lost, lease.renewing = True, False
                    lost.append(lease)
        for lease in lost:
            if lease.on_lost is not None:
                try:
                    lease.on_lost()
                except Exception:
                    _log.exception("on_lost of lease %r failed", lease.key)


_KEEPERS: weakref.WeakSet[LeaseKeeper] = weakref.WeakSet()


def _forked() -> None:
    """In a forked child: no keeper holds its parent's leases or runs its thread."""
    for keeper in list(_KEEPERS):
        keeper._reset()


os.register_at_fork(after_in_child=_forked)

LEASES = LeaseKeeper()
"""The process's lease keeper: run leases, record leases, abandoned calls' locks."""
