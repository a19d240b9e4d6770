"""Calls whose tool ignored the stop signal: their locks are held until the tool has ended.

A Python function on a worker thread cannot be killed. When it outlives its deadline or a
cancel request, the executor reports the call (timed out, cancelled, effect unknown) and
the run may go on or end — but the function still runs, and whatever it writes may still
land. So the call's resource locks are not released at commit: they stay held, their lease
renewed, until the thread really ends (seed 000 §3.6). Until then a second call under the
same lock key waits (or times out at its lock stage) instead of overlapping a write still
in progress; the run's log shows the call as abandoned, and again when it ends.

If the process dies, the thread dies with it and the lease simply expires. For a tool that
must be stoppable, run it in a child process (``@tool_spec(isolation="process")``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from execgraph.nodes.executor.stages import Locked
from execgraph.state.errors import ExecGraphError
from execgraph.state.store.base import ExecutionStore

__all__ = ["RENEW_EVERY_S", "hold_until_ended", "still_running"]

RENEW_EVERY_S = 5.0
"""How often the leases of abandoned calls are renewed (each renewal lasts four periods)."""


@dataclass
class _Held:
    store: ExecutionStore
    locked: Locked
    future: Future[Any]
    on_end: Callable[[float], None]
    since: float


_HELD: dict[int, _Held] = {}
_GUARD = threading.Lock()
_RENEWER: list[threading.Thread] = []


def still_running() -> int:
    """How many abandoned calls of this process are still running."""
    with _GUARD:
        return len(_HELD)


def hold_until_ended(
    store: ExecutionStore,
    locked: Locked | None,
    future: Future[Any],
    on_end: Callable[[float], None],
) -> None:
    """Keep ``locked`` held (its lease renewed) until ``future`` ends; then release it and
    call ``on_end`` with the seconds the tool ran on after it was abandoned."""
    held = _Held(store, locked or Locked((), "", 0), future, on_end, time.monotonic())
    with _GUARD:
        _HELD[id(future)] = held
        if not _RENEWER or not _RENEWER[0].is_alive():
            _RENEWER[:] = [threading.Thread(target=_renew, name="abandoned-calls", daemon=True)]
            _RENEWER[0].start()
    future.add_done_callback(lambda done: _ended(id(done)))


def _ended(ident: int) -> None:
    with _GUARD:
        held = _HELD.pop(ident, None)
    if held is None:
        return
    try:
        if held.locked.keys:
            held.store.release_locks(held.locked.keys, held.locked.owner)
    finally:
        held.on_end(time.monotonic() - held.since)


def _renew() -> None:
    """Renew every held lease while any abandoned call runs; then the thread ends."""
    while True:
        time.sleep(RENEW_EVERY_S)
        with _GUARD:
            current = [h for h in _HELD.values() if h.locked.keys]
            if not _HELD:
                _RENEWER.clear()
                return
        for held in current:
            # A lease lost while the store was down is not ours to take back by force.
            with contextlib.suppress(ExecGraphError):
                held.store.acquire_locks(
                    held.locked.keys, held.locked.owner, lease_s=4 * RENEW_EVERY_S, timeout_s=0
                )
