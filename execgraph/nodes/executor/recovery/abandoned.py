"""Calls whose tool ignored the stop signal: their locks are held until the tool has ended.

A Python function on a worker thread cannot be killed. When it outlives its deadline or a
cancel request, the executor reports the call (timed out, cancelled, effect unknown) and
the run may go on or end — but the function still runs, and whatever it writes may still
land. So the call's resource locks are not released at commit: they stay held, their lease
renewed by the process's lease keeper, until the thread really ends. Until then a second
call under the same lock key waits (or times out at its lock stage) instead of overlapping
a write still in progress; the run's log shows the call as abandoned, and again when it
ends. A lock taken over meanwhile (the store was out of reach past its lease) is not
taken back.

If the process dies, the thread dies with it and the lease simply expires. For a tool that
must be stoppable, run it in a child process (``@tool_spec(isolation="process")``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from execgraph.nodes.executor.stages.lock import Locked
from execgraph.state.errors import ExecGraphError, LockTimeout
from execgraph.state.lease_keeper import LEASES, Lease
from execgraph.state.store.base import ExecutionStore

__all__ = ["RENEW_EVERY_S", "hold_until_ended", "still_running"]

RENEW_EVERY_S = 5.0
"""How often the locks of abandoned calls are renewed (each renewal lasts four periods)."""

_Target = tuple[tuple[str, ...], str]  # the locks' keys and their owner


@dataclass(frozen=True)
class _AbandonedLocks:
    """Renews the locks abandoned calls hold in one store."""

    store: ExecutionStore

    @property
    def every_s(self) -> float:
        return RENEW_EVERY_S

    def renew(self, targets: Sequence[_Target]) -> Collection[_Target]:
        held = []
        for keys, owner in targets:
            if keys:
                try:
                    self.store.acquire_locks(keys, owner, lease_s=4 * RENEW_EVERY_S, timeout_s=0)
                except LockTimeout:
                    continue  # another owner holds one now: lost, not taken back
                except ExecGraphError:
                    pass  # cannot tell now: kept
            held.append((keys, owner))
        return held


def still_running() -> int:
    """How many abandoned calls of this process are still running."""
    return LEASES.count(_AbandonedLocks)


def hold_until_ended(
    store: ExecutionStore,
    locked: Locked | None,
    future: Future[Any],
    on_end: Callable[[float], None],
) -> None:
    """Keep ``locked`` held (its lease renewed) until ``future`` ends; then release it and
    call ``on_end`` with the seconds the tool ran on after it was abandoned."""
    held = locked or Locked((), "", 0)
    lease = LEASES.hold(("abandoned", id(future)), (held.keys, held.owner), _AbandonedLocks(store))
    assert lease is not None, "a running future is abandoned once"
    since = time.monotonic()
    future.add_done_callback(lambda _: _ended(lease, store, held, on_end, since))


def _ended(
    lease: Lease[_Target],
    store: ExecutionStore,
    locked: Locked,
    on_end: Callable[[float], None],
    since: float,
) -> None:
    lease.release()
    try:
        if locked.keys:
            store.release_locks(locked.keys, locked.owner)
    finally:
        on_end(time.monotonic() - since)
