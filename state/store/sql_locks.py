"""The store's locks over SQL: all-or-nothing sets of keys, each under a lease.

A lock guards a target (a file, a row, a URL) across workers while a call runs; an
expired lease may be taken over. How one attempt at a set of keys is made is each
backend's own (:meth:`SqlLocks._try_acquire`); polling for it, and releasing, are shared.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Sequence

from execgraph.state.errors import LockTimeout
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.sql_log import SqlLog

__all__ = ["SqlLocks"]

_LOCK_POLL_S = (0.005, 0.1)  # first and longest pause between lock attempts


def _poll_locks(try_once: Callable[[], bool], wanted: list[str], timeout_s: float) -> None:
    """Call ``try_once`` with growing pauses until it succeeds or ``timeout_s`` passes."""
    deadline = time.monotonic() + max(timeout_s, 0.0)
    pause = _LOCK_POLL_S[0]
    while not try_once():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LockTimeout(f"locks {', '.join(wanted)} were not granted within {timeout_s:g}s")
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, _LOCK_POLL_S[1])


class SqlLocks(SqlLog):
    """Locks on an SQL ``locks`` table; a backend provides the one attempt."""

    # -- what each backend provides besides the log's primitives ------------------------

    @abstractmethod
    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        """One all-or-nothing attempt at the sorted ``keys``; False if any is held."""

    # -- a statement used inside several transactions (a commit releases with it) -----

    def _release(self, cur: Cursor, keys: Sequence[str], owner: str) -> None:
        # One key at a time in sorted order: the order acquirers lock in, so no deadlock.
        d = self._dialect
        sql = f"DELETE FROM {d.table('locks')} WHERE key = {d.param} AND owner = {d.param}"
        for key in sorted(set(keys)):
            cur.execute(sql, (key, owner))

    # -- locks ----------------------------------------------------------------------

    def acquire_locks(
        self, keys: Sequence[str], owner: str, *, lease_s: float, timeout_s: float
    ) -> None:
        """Take every lock in ``keys`` or none; expired leases may be taken over.

        Re-acquiring a lock the owner already holds renews its lease. Keys are taken in
        sorted order in one transaction, so two callers can never each hold half.

        Raises:
            LockTimeout: Some key stayed held by another owner for ``timeout_s``.
        """
        wanted = sorted(set(keys))
        if not wanted:
            return
        _poll_locks(lambda: self._try_acquire(wanted, owner, lease_s), wanted, timeout_s)

    def release_locks(self, keys: Sequence[str], owner: str) -> None:
        """Release the owner's locks (others' locks are untouched)."""
        self._tx("release locks", lambda cur: self._release(cur, keys, owner))
