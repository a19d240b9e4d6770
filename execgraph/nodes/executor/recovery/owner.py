"""A record someone else holds: wait for its owner, or take the call over once it is gone.

Two workers resuming one run (two people approving one interrupt, ``invoke(None, cfg)``
on a thread still running elsewhere) compute the same call and find the same record,
owned by the worker that reserved it while its lease holds
(:mod:`execgraph.nodes.executor.record_lease`).

A worker that finds another's ``started`` record **waits** for it to settle — bounded by
the call's own timeout plus one lease — and then returns the committed result as its own
(so both runs' checkpoints agree). It never reconciles or restarts a live owner's call:
only an expired lease, or an owner provably gone (a process on this host that no longer
runs; a paused call, which holds nothing; an attempt of this very process that is no
longer running), lets it :meth:`take over <execgraph.state.store.base.ExecutionStore.
take_over>` the record, which bumps the fence, and then reconcile as after a crash
(:mod:`.take_over`). If the owner still holds the record when the wait is over, the
worker stops with :class:`~execgraph.state.errors.CallInProgress` naming the owner and
its lease, and runs nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from execgraph.nodes.executor import record_lease
from execgraph.nodes.executor.call import Call
from execgraph.nodes.executor.recovery.paused import resumes_pause
from execgraph.nodes.executor.stages.reserve import Reserved
from execgraph.state.errors import CallInProgress
from execgraph.state.store.base import ExecutionRecord
from execgraph.state.store.worker import owner_gone, worker_id

__all__ = ["Taken", "await_owner"]

_POLL_S = (0.002, 0.05)  # first and longest pause while waiting for another owner


def _free(record: ExecutionRecord) -> str | None:
    """The owner to take ``record`` from now (it holds nothing any more), or None."""
    if resumes_pause(record):
        return record.owner
    if record.owner == worker_id():
        return None if record_lease.running_here(record.attempt_id) else record.owner
    return record.owner if owner_gone(record.owner) else None


@dataclass(frozen=True)
class Taken:
    """A record this worker may act on: committed by its owner, or taken over by this one.

    ``previous`` is the record as it was before this worker took it (its owner may still
    hold the call's locks; a paused attempt resumes rather than reconciles).
    """

    held: Reserved
    previous: ExecutionRecord | None = None
    may_still_run: bool = False
    """Taken because its lease lapsed, its owner not proved gone (it may only be stalled)."""


def await_owner(call: Call, held: Reserved) -> Taken:
    """Wait for another owner's uncommitted record to be committed, or to be free to take.

    Raises:
        CallInProgress: the owner still held the record (its lease live) after the call's
            timeout plus one lease.
    """
    store = call.deps.store
    record, key = held.record, held.key
    wait_s = (call.spec.timeout_s or call.deps.default_timeout_s) + record_lease.LEASE_S
    deadline = time.monotonic() + wait_s
    pause = _POLL_S[0]
    while True:
        if record.state == "committed":
            return Taken(Reserved(key, "committed", record))
        gone = _free(record)
        taken = store.take_over(
            key,
            worker_id(),
            attempt_id=call.attempt_id,
            lease_s=record_lease.LEASE_S,
            gone=gone,
            fence=record.fence,
        )
        if taken is not None:
            alive = gone is None and bool(record.owner)  # an owner not proved gone
            return Taken(Reserved(key, "in_doubt", taken), previous=record, may_still_run=alive)
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
