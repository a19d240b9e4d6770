"""The store's locks over SQL: all-or-nothing sets of keys, each under a lease.

A lock guards a target (a file, a row, a URL) across workers while a call runs; an
expired lease may be taken over. How one attempt at a set of keys is made is each
backend's own (:meth:`SqlLocks._try_acquire`); polling for it, and releasing, are shared.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar

from execgraph.state.errors import LockTimeout
from execgraph.state.store.base import RunLease
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.sql_append_only import SqlLog
from execgraph.state.store.worker import owner_gone

__all__ = ["RUN_KEY_PREFIX", "SqlLocks", "run_key"]

#: A run's lease is the lock row of this key prefix and the run id.
RUN_KEY_PREFIX = "execgraph-run:"


def run_key(run_id: str) -> str:
    """The lock key of ``run_id``'s lease."""
    return RUN_KEY_PREFIX + run_id


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

    #: Whether taking a run lease waits for its own flush to disk. A server's store
    #: (PostgreSQL) must: it can lose an unflushed commit and come back while the worker
    #: that was granted the lease still runs, and a second worker would be granted it too.
    #: A backend whose unflushed commits are lost only together with every process that
    #: could have read them (a file on the host that runs them all) sets it False.
    _flush_run_lease: ClassVar[bool] = True

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

    def release_gone_locks(self, keys: Sequence[str]) -> None:
        """Release the locks on ``keys`` whose owners are provably gone (a worker killed
        while it held them), whoever took their calls over since; live owners' stay."""
        d = self._dialect
        read = f"SELECT key, owner FROM {d.table('locks')} WHERE key = {d.param}"

        def run(cur: Cursor) -> None:
            for key in sorted(set(keys)):
                row = cur.execute(read, (key,)).fetchone()
                if row is not None and owner_gone(str(row[1]).split("|", 1)[0]):
                    self._release(cur, [key], str(row[1]))

        self._tx("release a gone worker's locks", run)

    # -- run leases: a lock row per run, kept (expired) on release --------------------

    def lease_run(self, run_id: str, owner: str, *, lease_s: float) -> RunLease:
        """Take or renew ``run_id``'s lease for ``owner``: free, expired, its own, or its
        owner provably gone (:func:`~execgraph.state.store.worker.owner_gone`). One
        conditional upsert decides, so of two takers at once exactly one matches."""
        d, key = self._dialect, run_key(run_id)
        now, at = self._now()
        locks = d.table("locks")
        read = f"SELECT owner, lease_until FROM {locks} WHERE key = {d.param}"
        take = (
            f"INSERT INTO {locks} (key, owner, lease_until) VALUES ({d.param}, {d.param},"
            f" {now} + {d.param}) ON CONFLICT (key) DO UPDATE SET owner = excluded.owner,"
            f" lease_until = excluded.lease_until WHERE {locks}.owner = excluded.owner"
            f" OR {locks}.lease_until <= {now} OR {locks}.owner = {d.param}"
            " RETURNING lease_until"
        )

        def run(cur: Cursor) -> RunLease:
            row = cur.execute(read, (key,)).fetchone()
            gone = row[0] if row is not None and row[0] != owner and owner_gone(row[0]) else ""
            taken = cur.execute(take, (key, owner, *at, float(lease_s), *at, gone)).fetchone()
            if taken is not None:
                return RunLease(run_id, owner, float(taken[0]))
            held = cur.execute(read, (key,)).fetchone()
            return RunLease(run_id, str(held[0]), float(held[1]))

        return self._tx("take a run lease", run, durable=self._flush_run_lease)

    def renew_run(self, run_id: str, owner: str, *, lease_s: float) -> bool:
        """Extend ``owner``'s lease on ``run_id`` while the row still names ``owner``
        (expired or not); False once another worker took it, even if that one has
        released it since: a lease lost is never taken back by a renewal."""
        d = self._dialect
        now, at = self._now()
        sql = (
            f"UPDATE {d.table('locks')} SET lease_until = {now} + {d.param}"
            f" WHERE key = {d.param} AND owner = {d.param} RETURNING key"
        )

        def run(cur: Cursor) -> bool:
            row = cur.execute(sql, (*at, float(lease_s), run_key(run_id), owner)).fetchone()
            return row is not None

        # not flushed: a renewal lost to a power cut only lets the lease expire
        return self._tx("renew a run lease", run, durable=False)

    def release_run(self, run_id: str, owner: str) -> None:
        """End ``owner``'s lease on ``run_id``; the row keeps naming ``owner``."""
        d = self._dialect
        sql = (
            f"UPDATE {d.table('locks')} SET lease_until = 0"
            f" WHERE key = {d.param} AND owner = {d.param}"
        )
        # not flushed: a release lost to a power cut only lets the lease expire
        self._tx(
            "release a run lease",
            lambda cur: cur.execute(sql, (run_key(run_id), owner)),
            durable=False,
        )

    def lease_run_holder(self, run_id: str) -> str:
        """Who holds (or last held) ``run_id``'s lease ("" when nobody ever did)."""
        d = self._dialect
        sql = f"SELECT owner FROM {d.table('locks')} WHERE key = {d.param}"

        def run(cur: Cursor) -> str:
            row = cur.execute(sql, (run_key(run_id),)).fetchone()
            return "" if row is None else str(row[0])

        return self._read("read a run lease", run)
