"""The ExecutionStore methods over SQL, written once for every SQL backend.

SQLite and PostgreSQL keep the same tables and run the same statements, apart from the
words a :class:`~execgraph.state.store.dialect.Dialect` names. So the protocol's methods
live here and in :mod:`execgraph.state.store.sql_log` (events, artifacts, approval
tokens), over a few primitives that are each backend's own: how a transaction is opened,
made durable (or not) and its errors reported; whose clock stamps a row; how one attempt
at a set of locks is made; and the connections themselves. Here: the execution records
and the locks, whose writes decide on what a statement in the same transaction read or
matched.
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from execgraph.state.errors import FencedOut, LockTimeout, StoreError
from execgraph.state.events import Event
from execgraph.state.store.base import Claim, ExecutionRecord, OutcomeCount, Reservation
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.live import streamed
from execgraph.state.store.rows import RECORD_COLUMNS, claim_row, record_from_row
from execgraph.state.store.sql_log import SqlLog

__all__ = ["SqlExecutionStore"]

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


def _fenced_out(record: ExecutionRecord, fence: int | None) -> FencedOut:
    return FencedOut(
        f"call {record.call_id!r} of run {record.run_id!r} was taken over by worker "
        f"{record.owner} (fence {record.fence}, this worker held fence {fence}) after this "
        "worker's lease expired; this worker's result was not recorded"
    )


class SqlExecutionStore(SqlLog):
    """An ExecutionStore on SQL tables; a backend names its dialect and its primitives."""

    # -- what each backend provides besides the log's primitives ------------------------

    @abstractmethod
    def _try_acquire(self, keys: list[str], owner: str, lease_s: float) -> bool:
        """One all-or-nothing attempt at the sorted ``keys``; False if any is held."""

    # -- statements used inside several transactions ----------------------------------

    def _get(self, cur: Cursor, key: str, *, for_update: bool = False) -> ExecutionRecord | None:
        d = self._dialect
        sql = f"SELECT {RECORD_COLUMNS} FROM {d.table('executions')} WHERE idempotency_key = "
        sql += d.param + (d.lock_row if for_update else "")
        row = cur.execute(sql, (key,)).fetchone()
        return None if row is None else record_from_row(row)

    def _reserve(
        self, cur: Cursor, values: tuple[str, ...], owner: str, lease_s: float
    ) -> Reservation:
        """Create a started record of ``values`` (key first) unless the key has one; a new
        record is ``owner``'s for ``lease_s`` seconds, fence 1.

        One statement decides: the insert that skips an existing key returns the row it
        wrote (PostgreSQL's waits for a concurrent inserter and yields to it; SQLite's
        runs under the store's write lock). Only a key that exists is read back.
        """
        d = self._dialect
        now, at = self._now()
        row_values = (
            f"{d.params(len(values))}, 1, 'started', NULL, {now}, {now},"
            f" {d.param}, {now} + {d.param}, 1"
        )
        sql = d.insert_ignore(
            d.table("executions"), RECORD_COLUMNS, row_values, key="idempotency_key"
        )
        params = (*values, *at, *at, owner, *at, float(lease_s))
        row = cur.execute(f"{sql} RETURNING {RECORD_COLUMNS}", params).fetchone()
        if row is not None:
            return Reservation(record=record_from_row(row), fresh=True)
        existing = self._get(cur, values[0])
        if existing is None:  # deleted in between: not something execgraph does
            raise StoreError(f"execution record {values[0]!r} vanished during reserve")
        return Reservation(record=existing, fresh=False)

    def _update_record(
        self,
        cur: Cursor,
        key: str,
        assignments: str,
        params: tuple[Any, ...],
        *,
        uncommitted_only: bool = False,
        fence: int | None = None,
    ) -> ExecutionRecord | None:
        """Apply ``assignments`` to ``key``'s record, stamp ``updated_at``, return the record
        (``RETURNING``: the same statement, not a second read); None if no row matched.

        ``uncommitted_only`` leaves a committed record as it is, ``fence`` one taken over
        since. In PostgreSQL the update waits for a concurrent committer's row lock, then
        re-checks the state and yields.
        """
        d = self._dialect
        now, at = self._now()
        sql = f"UPDATE {d.table('executions')} SET {assignments}, updated_at = {now} "
        sql += f"WHERE idempotency_key = {d.param}"
        sql += " AND state <> 'committed'" if uncommitted_only else ""
        where: tuple[Any, ...] = ()
        if fence is not None:
            sql, where = sql + f" AND fence = {d.param}", (fence,)
        sql += f" RETURNING {RECORD_COLUMNS}"
        row = cur.execute(sql, (*params, *at, key, *where)).fetchone()
        return None if row is None else record_from_row(row)

    def _release(self, cur: Cursor, keys: Sequence[str], owner: str) -> None:
        # One key at a time in sorted order: the order acquirers lock in, so no deadlock.
        d = self._dialect
        sql = f"DELETE FROM {d.table('locks')} WHERE key = {d.param} AND owner = {d.param}"
        for key in sorted(set(keys)):
            cur.execute(sql, (key, owner))

    # -- execution records ------------------------------------------------------------

    def reserve(
        self,
        key: str,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        version: str,
        args_hash: str,
        attempt_id: str,
        durable: bool = True,
        owner: str = "",
        lease_s: float = 0.0,
    ) -> Reservation:
        """Create a ``started`` record for ``key`` unless one exists; durable on return.

        A new record is ``owner``'s for ``lease_s`` seconds. ``durable=False`` does not wait
        for the flush (see :meth:`_tx`): for a call with no side effect, whose record guards
        nothing but is still seen at once by every worker.
        """
        values = (key, run_id, call_id, tool, version, args_hash, attempt_id)
        return self._tx(
            "reserve an execution record",
            lambda cur: self._reserve(cur, values, owner, lease_s),
            durable=durable,
        )

    def reserve_all(
        self, claims: Sequence[Claim], *, durable: bool = True, log: Sequence[Event] = ()
    ) -> list[Reservation]:
        """Reserve every claim as :meth:`reserve` would, in one transaction, in order;
        append ``log`` first, in the same transaction."""
        if not claims:
            if log:
                self.append_events(log, durable=durable)
            return []
        rows = [(claim_row(claim), claim.owner, claim.lease_s) for claim in claims]

        def run(cur: Cursor) -> list[Reservation]:
            self._append(cur, log)
            return [self._reserve(cur, values, owner, lease) for values, owner, lease in rows]

        with streamed():
            return self._tx("reserve execution records", run, durable=durable)

    def restart(self, key: str, attempt_id: str, *, fence: int | None = None) -> ExecutionRecord:
        """Start a new attempt on an uncommitted record (after reconcile proved no effect).

        Restarting with the attempt id the record already carries changes nothing, so a
        node replayed after a crash does not count the attempt twice.

        Raises:
            FencedOut: ``fence`` is given and the record was taken over since.
            StoreError: The key is unknown or already committed.
        """

        def run(cur: Cursor) -> ExecutionRecord:
            record = self._get(cur, key, for_update=True)
            if record is None:
                raise StoreError(f"no execution record for key {key!r} to restart")
            if record.state == "committed":
                raise StoreError(f"execution record {key!r} is committed; it cannot restart")
            if fence is not None and record.fence != fence:
                raise _fenced_out(record, fence)
            if record.attempt_id == attempt_id:
                return record
            assignments = f"attempt_id = {self._dialect.param}, attempts = attempts + 1"
            restarted = self._update_record(cur, key, assignments, (attempt_id,))
            assert restarted is not None, "read under a lock in this transaction"
            return restarted

        return self._tx("restart an execution record", run)

    def take_over(
        self,
        key: str,
        owner: str,
        *,
        attempt_id: str,
        lease_s: float,
        gone: str | None = None,
        fence: int | None = None,
    ) -> ExecutionRecord | None:
        """Make ``owner`` the owner of ``key``'s uncommitted record as a new attempt, the fence
        one higher; only if its lease expired (store clock), or its owner is ``gone`` and its
        fence still ``fence`` (as the caller saw it: the owner may be unchanged when a
        process takes over its own dead attempt).

        One conditional update decides, so of several takers at once exactly one matches
        (the others find the new fence, or the new owner's live lease). None: committed,
        or still held.
        """
        d = self._dialect
        now, at = self._now()
        sql = (
            f"UPDATE {d.table('executions')} SET owner = {d.param}, attempt_id = {d.param},"
            f" attempts = attempts + 1, fence = fence + 1, lease_until = {now} + {d.param},"
            f" updated_at = {now} WHERE idempotency_key = {d.param} AND state = 'started'"
            f" AND (lease_until <= {now}"
        )
        params: tuple[Any, ...] = (owner, attempt_id, *at, float(lease_s), *at, key, *at)
        if gone is not None:
            sql += f" OR (owner = {d.param} AND fence = {d.param})"
            params = (*params, gone, -1 if fence is None else fence)
        sql += f") RETURNING {RECORD_COLUMNS}"

        def run(cur: Cursor) -> ExecutionRecord | None:
            row = cur.execute(sql, params).fetchone()
            return None if row is None else record_from_row(row)

        return self._tx("take over an execution record", run)

    def renew_leases(self, keys: Sequence[str], owner: str, *, lease_s: float) -> list[str]:
        """Extend ``owner``'s leases on the uncommitted records of ``keys``; returns the keys
        still held. Not flushed: a renewal lost to a power cut only lets a lease expire."""
        if not keys:
            return []
        d = self._dialect
        now, at = self._now()
        sql = (
            f"UPDATE {d.table('executions')} SET lease_until = {now} + {d.param}"
            f" WHERE idempotency_key = {d.param} AND owner = {d.param} AND state = 'started'"
            " RETURNING idempotency_key"
        )

        def run(cur: Cursor) -> list[str]:
            held = []
            for key in sorted(set(keys)):  # sorted: the order every writer locks rows in
                if cur.execute(sql, (*at, float(lease_s), key, owner)).fetchone() is not None:
                    held.append(key)
            return held

        return self._tx("renew leases", run, durable=False)

    def settle_unknown(
        self, key: str, result: dict[str, Any], *, events: Sequence[Event] = ()
    ) -> ExecutionRecord:
        """Replace a committed ``unknown`` result with a person's verdict, with ``events``.

        The one change a committed record may take, and only from ``unknown``: what a person
        found out about a call whose response was lost. Read and written under the record's
        lock in one transaction, so two verdicts cannot both land.

        Raises:
            StoreError: The key is unknown, uncommitted, or its outcome is not unknown.
        """
        try:
            body = json.dumps(result, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"the result for {key!r} is not JSON-serializable") from exc

        def run(cur: Cursor) -> ExecutionRecord:
            record = self._get(cur, key, for_update=True)
            if record is None or record.state != "committed" or record.result is None:
                raise StoreError(f"no committed execution record for key {key!r} to settle")
            if record.result.get("outcome") != "unknown":
                outcome = record.result.get("outcome")
                raise StoreError(f"the outcome of {key!r} is {outcome!r}, not unknown")
            settled = self._update_record(cur, key, f"result = {self._dialect.param}", (body,))
            assert settled is not None, "read under a lock in this transaction"
            self._append(cur, events)
            return settled

        with streamed():
            return self._tx("settle an unknown outcome", run)

    def get(self, key: str) -> ExecutionRecord | None:
        """The record for ``key``, if any."""
        return self._read("read an execution record", lambda cur: self._get(cur, key))

    def pending(self, run_id: str | None = None) -> list[ExecutionRecord]:
        """Records started but not committed (to reconcile after a crash), oldest first."""
        d = self._dialect
        sql = f"SELECT {RECORD_COLUMNS} FROM {d.table('executions')} WHERE state = 'started'"
        params: tuple[str, ...] = ()
        if run_id is not None:
            sql += f" AND run_id = {d.param}"
            params = (run_id,)
        sql += f" ORDER BY created_at, {d.tiebreak}"
        return self._read(
            "list pending records",
            lambda cur: [record_from_row(row) for row in cur.execute(sql, params).fetchall()],
        )

    def committed(
        self, run_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[ExecutionRecord]:
        """A run's committed records, oldest first (a page of them with ``offset``/``limit``)."""
        d = self._dialect
        sql = (
            f"SELECT {RECORD_COLUMNS} FROM {d.table('executions')}"
            f" WHERE state = 'committed' AND run_id = {d.param}"
            f" ORDER BY created_at, {d.tiebreak} LIMIT {d.param} OFFSET {d.param}"
        )
        params = (run_id, d.no_limit if limit is None else limit, offset)
        return self._read(
            "list committed records",
            lambda cur: [record_from_row(row) for row in cur.execute(sql, params).fetchall()],
        )

    def outcomes(self, run_id: str) -> list[OutcomeCount]:
        """A run's committed calls counted per tool, outcome and status."""
        d = self._dialect
        sql = (
            f"SELECT {d.result_fields}, count(*) FROM {d.table('executions')}"
            f" WHERE state = 'committed' AND run_id = {d.param}"
            " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        )
        rows = self._read("count outcomes", lambda cur: cur.execute(sql, (run_id,)).fetchall())
        return [OutcomeCount(t or "", o or "", s or "", int(n)) for t, o, s, n in rows]

    def evidence(self, run_id: str) -> list[dict[str, Any]]:
        """The evidence items of a run's committed results, oldest first."""
        d = self._dialect
        sql = (
            f"SELECT {d.evidence} FROM {d.table('executions')}"
            f" WHERE state = 'committed' AND run_id = {d.param} AND {d.has_evidence}"
            f" ORDER BY created_at, {d.tiebreak}"
        )
        rows = self._read("read evidence", lambda cur: cur.execute(sql, (run_id,)).fetchall())
        return [item for (items,) in rows for item in json.loads(items)]

    def commit(
        self,
        key: str,
        result: dict[str, Any],
        *,
        events: Sequence[Event] = (),
        release: Sequence[str] = (),
        owner: str = "",
        durable: bool = True,
        fence: int | None = None,
    ) -> ExecutionRecord:
        """In one transaction: store the result, mark committed, append events, release locks.

        ``durable=False`` does not wait for the flush (see :meth:`_tx`), for a call that is
        safe to redo (a read): a result lost to a power cut leaves the record started.
        ``fence`` commits only the attempt that still holds the record: one taken over
        since (by a worker that found this one's lease expired) is left to its new owner.

        The update matches only an uncommitted record, under a lock (its row's, or the
        whole store's), so a second commit of a key finds it committed and returns it as
        it is, appending no events (the first commit wins); the caller's own locks in
        ``release`` are still released, so a duplicate commit cannot leak them.

        Raises:
            FencedOut: ``fence`` is given and another worker took the record over.
            StoreError: The key was never reserved, or the result is not JSON.
        """
        try:
            body = json.dumps(result, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"the result for {key!r} is not JSON-serializable") from exc

        # A committed record is nobody's to run: its owner and lease go with the commit.
        assignments = (
            f"state = 'committed', result = {self._dialect.param}, owner = '', lease_until = 0"
        )

        def run(cur: Cursor) -> ExecutionRecord:
            record = self._update_record(
                cur, key, assignments, (body,), uncommitted_only=True, fence=fence
            )
            if record is not None:
                self._append(cur, events)
            else:  # committed already (the first commit wins), taken over, or never reserved
                record = self._get(cur, key)
                if record is None:
                    raise StoreError(f"no execution record for key {key!r} to commit")
            self._release(cur, release, owner)
            return record

        with streamed():
            record = self._tx("commit an execution record", run, durable=durable)
        if record.state != "committed":  # its locks are released all the same
            raise _fenced_out(record, fence)
        return record

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
