"""The lease on a call's execution record: the worker that reserved it runs it, while the
lease holds.

A record is owned by the worker that reserved it (:mod:`execgraph.state.store.worker`),
with a lease of :data:`LEASE_S` that the process's lease keeper
(:data:`~execgraph.state.lease_keeper.LEASES`) renews every :data:`RENEW_EVERY_S` while
the call runs, and a fencing token that a takeover raises. Another worker may take the
record over only once the lease has expired or its owner is provably gone
(:mod:`execgraph.nodes.executor.recovery.owner`); the owner it was taken from can then no
longer commit (``FencedOut``). If that owner was only stalled, its next renewal finds the
lease gone and sets the call's cancel signal: the tool is told to stop, and whatever it
still reports is refused at commit.

Inside one process, attempts are told apart by id: each holds its lease from before it
reserves (:func:`hold_record`, not renewed until :meth:`~execgraph.state.lease_keeper.
Lease.start`, once the record is its own) until its end, so a record of this process
whose attempt is still running (:func:`running_here`) is as live as another worker's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from execgraph.nodes.executor.call import Call
from execgraph.state.lease_keeper import LEASES, Lease
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.worker import worker_id

__all__ = ["LEASE_S", "RENEW_EVERY_S", "hold_record", "running_here"]

LEASE_S = 30.0
"""How long a record's lease holds without a renewal (a crashed worker on another host
is recovered this long after its last renewal; on this host, at once). Read when a record
is reserved, taken over or renewed."""

RENEW_EVERY_S = LEASE_S / 3
"""How often the leases of this process's calls in flight are renewed."""


@dataclass(frozen=True)
class _RecordLeases:
    """Renews this process's record leases in one store: one transaction for them all."""

    store: ExecutionStore

    @property
    def every_s(self) -> float:
        return RENEW_EVERY_S

    def renew(self, keys: Sequence[str]) -> Collection[str]:
        return self.store.renew_leases(list(keys), worker_id(), lease_s=LEASE_S)


def _key(attempt_id: str) -> tuple[str, str]:
    return ("attempt", attempt_id)


def hold_record(call: Call) -> Lease[str]:
    """Hold the lease on ``call``'s record from before it is reserved: its attempt is live
    in this process from now until the lease is released (renewed once started)."""
    lease = LEASES.hold(
        _key(call.attempt_id), call.key, _RecordLeases(call.deps.store), renewing=False
    )
    assert lease is not None, "attempt ids are unique"
    call.lease = lease
    return lease


def running_here(attempt_id: str) -> bool:
    """Whether an attempt of this process is still running (it holds its record lease)."""
    return LEASES.holds(_key(attempt_id))
