"""Who may run a call: the worker that owns its execution record, while its lease holds.

Two workers resuming one run (two people approving one interrupt, ``invoke(None, cfg)``
on a thread still running elsewhere) compute the same call and find the same record. The
record is owned by the worker that reserved it (:mod:`execgraph.state.store.worker`),
with a lease this process renews while the tool runs (one shared ticker thread for every
call in flight, every :data:`RENEW_EVERY_S`) and a fencing token.

A worker that finds another's ``started`` record **waits** for it to settle — bounded by
the call's own timeout plus one lease — and then returns the committed result as its own
(so both runs' checkpoints agree). It never reconciles or restarts a live owner's call:
only an expired lease, or an owner provably gone (a process on this host that no longer
runs; a paused call, which holds nothing; an attempt of this very process that is no
longer running), lets it :meth:`take over <execgraph.state.store.base.ExecutionStore.
take_over>` the record, which bumps the fence, and then reconcile as after a crash. If
the owner still holds the record when the wait is over, the worker stops with
:class:`~execgraph.state.errors.CallInProgress` naming the owner and its lease, and runs
nothing. An owner whose lease lapsed and was taken over cannot commit (``FencedOut``).

Inside one process, attempts are told apart by id: each registers its attempt id before
it reserves (:func:`begin`) and leaves at its end (:func:`end`), so a record of this
process's own whose attempt is still running is as live as another worker's.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import suppress
from dataclasses import dataclass

from execgraph.nodes.executor.paused import resumes_pause
from execgraph.nodes.executor.stages import Reserved
from execgraph.state.errors import CallInProgress, ExecGraphError
from execgraph.state.store.base import ExecutionRecord, ExecutionStore
from execgraph.state.store.worker import owner_gone, worker_id

__all__ = ["LEASE_S", "RENEW_EVERY_S", "Taken", "await_owner", "begin", "end", "lock_owner"]

LEASE_S = 30.0
"""How long a record's lease holds without a renewal (a crashed worker on another host
is recovered this long after its last renewal; on this host, at once)."""

RENEW_EVERY_S = LEASE_S / 3
"""How often the ticker renews the leases of this process's calls in flight."""

_POLL_S = (0.002, 0.05)  # first and longest pause while waiting for another owner

_GUARD = threading.Lock()
_LIVE: dict[str, tuple[ExecutionStore, str] | None] = {}  # attempt id -> (store, key) held
_TICKER: list[threading.Thread] = []
_WAKE = threading.Event()  # set: renew now, and time the next renewals from now


def _forked() -> None:
    """A forked child is a new worker: none of the parent's calls run in it, no ticker
    either, and the guard may have been held by a parent's thread at the fork."""
    global _GUARD
    _GUARD = threading.Lock()
    _LIVE.clear()
    _TICKER.clear()


os.register_at_fork(after_in_child=_forked)


def lock_owner(owner: str, key: str) -> str:
    """The name a call's resource locks are held under: its worker and its record."""
    return f"{owner}|{key}"


def begin(attempt_id: str) -> None:
    """Register an attempt of this process before it reserves: its record is live here."""
    with _GUARD:
        _LIVE.setdefault(attempt_id, None)


def hold(store: ExecutionStore, key: str, attempt_id: str) -> None:
    """Keep renewing this attempt's lease on ``key`` until :func:`end`."""
    with _GUARD:
        _LIVE[attempt_id] = (store, key)
        if not _TICKER or not _TICKER[0].is_alive():
            _TICKER[:] = [threading.Thread(target=_tick, name="execgraph-leases", daemon=True)]
            _TICKER[0].start()


def end(attempt_id: str) -> None:
    """The attempt is over (committed, failed, paused or raised): nothing to renew."""
    with _GUARD:
        _LIVE.pop(attempt_id, None)


def _tick() -> None:
    """Renew every held lease, one statement per record, one transaction per store."""
    while True:
        _WAKE.wait(RENEW_EVERY_S)
        _WAKE.clear()
        with _GUARD:
            held = [h for h in _LIVE.values() if h is not None]
        by_store: dict[int, tuple[ExecutionStore, list[str]]] = {}
        for store, key in held:
            by_store.setdefault(id(store), (store, []))[1].append(key)
        for store, keys in by_store.values():
            # A renewal the store refuses lets the lease lapse; the commit will be told.
            with suppress(ExecGraphError):
                store.renew_leases(keys, worker_id(), lease_s=LEASE_S)


def _free(record: ExecutionRecord) -> str | None:
    """The owner to take ``record`` from now (it holds nothing any more), or None."""
    if resumes_pause(record):
        return record.owner
    if record.owner == worker_id():
        with _GUARD:
            running = record.attempt_id in _LIVE
        return None if running else record.owner
    return record.owner if owner_gone(record.owner) else None


@dataclass(frozen=True)
class Taken:
    """A record this worker may act on: committed by its owner, or taken over by this one.

    ``previous`` is the record as it was before this worker took it (its owner may still
    hold the call's locks; a paused attempt resumes rather than reconciles).
    """

    held: Reserved
    previous: ExecutionRecord | None = None


def await_owner(store: ExecutionStore, held: Reserved, attempt_id: str, *, wait_s: float) -> Taken:
    """Wait for another owner's uncommitted record to be committed, or to be free to take.

    Raises:
        CallInProgress: the owner still held the record (its lease live) after ``wait_s``.
    """
    record, key = held.record, held.key
    deadline = time.monotonic() + wait_s
    pause = _POLL_S[0]
    while True:
        if record.state == "committed":
            return Taken(Reserved(key, "committed", record))
        gone = _free(record)
        taken = store.take_over(
            key, worker_id(), attempt_id=attempt_id, lease_s=LEASE_S, gone=gone, fence=record.fence
        )
        if taken is not None:
            return Taken(Reserved(key, "in_doubt", taken), previous=record)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CallInProgress(
                f"call {record.call_id!r} of run {record.run_id!r} is being run by worker "
                f"{record.owner} (lease until {time.ctime(record.lease_until)}); not run "
                "again here: resume the run once that worker is done"
            )
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, _POLL_S[1])
        current = store.get(key)
        if current is None:
            raise CallInProgress(f"the execution record {key!r} vanished while waiting")
        record = current
