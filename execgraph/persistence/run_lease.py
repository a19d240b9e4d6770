"""One worker runs a thread at a time: the run lease a graph's entry points hold.

Two processes resuming one thread at once (two people approving one interrupt, a retry
fired while the first attempt still runs) would both load the same checkpoint and both
act. So every call that runs a run graph (``stream``/``astream``, hence ``invoke`` and
``ainvoke``) first takes the thread's lease in the execution store
(:meth:`~execgraph.state.store.base.ExecutionStore.lease_run`, owner
:func:`~execgraph.state.store.worker.worker_id`): once per call, not per step. A second
worker finds it held by a live owner and gets
:class:`~execgraph.state.errors.RunInProgress` at once, saying who holds it and until
when; a second call of the same thread in this process too. The lease is renewed while
the run goes on (by the process's lease keeper, :data:`~execgraph.state.lease_keeper.LEASES`,
every :data:`RENEW_EVERY_S`) and released when the call returns; an expired lease, or one
whose owner is provably gone (a crashed process on this host), is taken over.

It is fenced: the store refuses to commit a run's execution record for any worker but
the lease's owner (:class:`~execgraph.state.errors.FencedOut`, nothing applied), so a
worker that stalled past its lease and was taken over cannot record an effect. Its
renewal then finds the lease gone and never takes it back, and says so on the
``execgraph.leases`` logger.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial

from execgraph.state.diagnostics import logger
from execgraph.state.errors import ExecGraphError, FencedOut, RunInProgress
from execgraph.state.lease_keeper import LEASES
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.worker import worker_id

__all__ = ["RENEW_EVERY_S", "RUN_LEASE_S", "check_run_fence", "held_run"]

RUN_LEASE_S = 30.0
"""How long a run lease holds without a renewal (a worker crashed on another host frees
its runs this long after its last renewal; on this host, at once). Read at each renewal."""

RENEW_EVERY_S = RUN_LEASE_S / 3
"""How often this process's run leases are renewed."""

_log = logger("leases")


@dataclass(frozen=True)
class _RunLeases:
    """Renews the run leases this process holds in one store."""

    store: ExecutionStore

    @property
    def every_s(self) -> float:
        return RENEW_EVERY_S

    def renew(self, threads: Sequence[str]) -> Collection[str]:
        me, held = worker_id(), []
        for thread in threads:
            try:
                if not self.store.renew_run(thread, me, lease_s=RUN_LEASE_S):
                    continue  # taken over (and maybe released since): lost for good
            except ExecGraphError:
                pass  # cannot tell now: kept
            held.append(thread)
        return held


def _in_progress(thread: str, owner: str, until: float) -> RunInProgress:
    return RunInProgress(
        f"run {thread!r} is being run by worker {owner} (run lease until "
        f"{time.ctime(until)}); not resumed here: resume it once that worker is done"
    )


def _lost(thread: str) -> None:
    _log.warning(
        "run %r: its lease was taken over by another worker while this one ran it; "
        "this worker's commits are refused (FencedOut)",
        thread,
    )


def _lease_key(store: ExecutionStore, thread: str) -> tuple[str, int, str]:
    return ("run", id(store), thread)


def check_run_fence(store: ExecutionStore, thread: str) -> None:
    """Refuse a write of ``thread``'s run (a checkpoint) from a worker whose run lease was
    taken over; nothing to check for a thread this process is not running.

    Cheap while the lease is surely held: within half a lease period of its last grant
    or renewal nobody else can have taken it, so only a worker that stalled longer (the
    case to fence) asks the store.

    Raises:
        FencedOut: another worker holds (or took) the run's lease.
    """
    lease = LEASES.lease(_lease_key(store, thread))
    if lease is None or not (lease.renewing or lease.lost):
        return  # not running the thread here (or not granted yet)
    if lease.lost:
        raise _taken(thread, "another worker")
    if time.monotonic() - lease.confirmed_at < RUN_LEASE_S / 2:
        return
    holder = store.lease_run_holder(thread)
    if holder not in ("", worker_id()):
        raise _taken(thread, holder)


def _taken(thread: str, holder: str) -> FencedOut:
    return FencedOut(
        f"run {thread!r} was taken over by {holder} while this worker was stalled past its "
        "run lease; this worker writes nothing more of it"
    )


@contextmanager
def held_run(store: ExecutionStore, thread: str) -> Iterator[None]:
    """Hold ``thread``'s run lease while the block runs.

    Raises:
        RunInProgress: another worker, or another call in this process, runs the thread.
    """
    lease = LEASES.hold(
        _lease_key(store, thread),
        thread,
        _RunLeases(store),
        on_lost=partial(_lost, thread),
        renewing=False,  # not before the store grants it
    )
    if lease is None:
        raise _in_progress(thread, worker_id(), time.time() + RUN_LEASE_S)
    try:
        asked = time.monotonic()
        taken = store.lease_run(thread, worker_id(), lease_s=RUN_LEASE_S)
        if taken.owner != worker_id():
            raise _in_progress(thread, taken.owner, taken.lease_until)
        lease.confirm(asked)
        lease.start()
        try:
            yield
        finally:
            lease.release()  # first: no renewal may take it again once it is released
            with suppress(ExecGraphError):  # unreleased, the lease only expires
                store.release_run(thread, worker_id())
    finally:
        lease.release()
