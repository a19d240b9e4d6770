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
the run goes on (one shared ticker thread, every :data:`RENEW_EVERY_S`) and released
when the call returns; an expired lease, or one whose owner is provably gone (a crashed
process on this host), is taken over.

It is fenced: the store refuses to commit a run's execution record for any worker but
the lease's owner (:class:`~execgraph.state.errors.FencedOut`, nothing applied), so a
worker that stalled past its lease and was taken over cannot record an effect.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from execgraph.state.errors import ExecGraphError, RunInProgress
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.worker import worker_id

__all__ = ["RENEW_EVERY_S", "RUN_LEASE_S", "held_run", "renew_now"]

RUN_LEASE_S = 30.0
"""How long a run lease holds without a renewal (a worker crashed on another host frees
its runs this long after its last renewal; on this host, at once)."""

RENEW_EVERY_S = RUN_LEASE_S / 3
"""How often the ticker renews this process's run leases."""

_GUARD = threading.Lock()
# (store id, thread) -> the store once its lease is held here (None: being taken)
_HELD: dict[tuple[int, str], ExecutionStore | None] = {}
_TICKER: list[threading.Thread] = []
_WAKE = threading.Event()  # set: renew now, and time the next renewals from now


def _forked() -> None:
    """A forked child is a new worker: it holds none of its parent's runs."""
    global _GUARD
    _GUARD = threading.Lock()
    _HELD.clear()
    _TICKER.clear()


os.register_at_fork(after_in_child=_forked)


def _in_progress(thread: str, owner: str, until: float) -> RunInProgress:
    return RunInProgress(
        f"run {thread!r} is being run by worker {owner} (run lease until "
        f"{time.ctime(until)}); not resumed here: resume it once that worker is done"
    )


@contextmanager
def held_run(store: ExecutionStore, thread: str) -> Iterator[None]:
    """Hold ``thread``'s run lease while the block runs.

    Raises:
        RunInProgress: another worker, or another call in this process, runs the thread.
    """
    slot = (id(store), thread)
    with _GUARD:
        if slot in _HELD:
            raise _in_progress(thread, worker_id(), time.time() + RUN_LEASE_S)
        _HELD[slot] = None
    try:
        lease = store.lease_run(thread, worker_id(), lease_s=RUN_LEASE_S)
        if lease.owner != worker_id():
            raise _in_progress(thread, lease.owner, lease.lease_until)
        with _GUARD:
            _HELD[slot] = store
        _start_ticker()
        try:
            yield
        finally:
            with suppress(ExecGraphError):  # unreleased, the lease only expires
                store.release_run(thread, worker_id())
    finally:
        with _GUARD:
            _HELD.pop(slot, None)


def _start_ticker() -> None:
    with _GUARD:
        if not _TICKER or not _TICKER[0].is_alive():
            _TICKER[:] = [threading.Thread(target=_tick, name="execgraph-runs", daemon=True)]
            _TICKER[0].start()


def renew_now() -> None:
    """Have the ticker renew every run lease of this process at once (and time its next
    renewals from now)."""
    _WAKE.set()


def _tick() -> None:
    """Renew every run lease this process holds. A lease taken over meanwhile is not
    taken back here (its owner holds it); the store fences this worker's commits."""
    while True:
        _WAKE.wait(RENEW_EVERY_S)
        _WAKE.clear()
        with _GUARD:
            held = list(_HELD.items())
        for (_, thread), store in held:
            if store is None:
                continue
            with suppress(ExecGraphError):
                store.lease_run(thread, worker_id(), lease_s=RUN_LEASE_S)
