"""The ExecutionStore over SQL, written once for every SQL backend: the record's life.

SQLite and PostgreSQL keep the same tables and run the same statements, apart from the
words a :class:`~execgraph.state.store.dialect.Dialect` names. So the protocol's methods
live in this package's ``sql*`` modules, over a few primitives that are each backend's own
(:class:`~execgraph.state.store.sql_append_only.SqlLog`: how a transaction is opened, made durable
(or not) and its errors reported; whose clock stamps a row; the connections themselves;
and :class:`~execgraph.state.store.sql_locks.SqlLocks`: how one attempt at a set of locks
is made). Each module owns one part: events, artifacts and approval tokens
(:mod:`.sql_log`), locks (:mod:`.sql_locks`), reading records (:mod:`.sql_reads`), leases
and takeover (:mod:`.sql_leases`). Here: a record's writes from reserve to commit, which
decide on what a statement in the same transaction read or matched, and the store that
joins the parts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from execgraph.state.errors import FencedOut, StoreError
from execgraph.state.events import Event
from execgraph.state.store.base import Claim, ExecutionRecord, Reservation
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.live import streamed
from execgraph.state.store.rows import RECORD_COLUMNS, claim_row, record_from_row
from execgraph.state.store.sql_leases import SqlLeases
from execgraph.state.store.sql_locks import RUN_KEY_PREFIX, SqlLocks
from execgraph.state.store.sql_reads import SqlRecordReads
from execgraph.state.store.worker import worker_id

__all__ = ["SqlExecutionStore"]


def _fenced_out(record: ExecutionRecord, fence: int | None) -> FencedOut:
    return FencedOut(
        f"call {record.call_id!r} of run {record.run_id!r} was taken over by worker "
        f"{record.owner} (fence {record.fence}, this worker held fence {fence}) after this "
        "worker's lease expired; this worker's result was not recorded"
    )


def _run_fenced_out(record: ExecutionRecord, holder: str) -> FencedOut:
    return FencedOut(
        f"run {record.run_id!r} was taken over by worker {holder} (its run lease) while "
        f"this worker ran call {record.call_id!r}; this worker's result was not recorded"
    )


class SqlExecutionStore(SqlLeases, SqlRecordReads, SqlLocks):
    """An ExecutionStore on SQL tables; a backend names its dialect and its primitives."""

    # -- statements used inside several transactions ----------------------------------

    def _reserve(
        self,
        cur: Cursor,
        values: tuple[str, ...],
        owner: str,
        lease_s: float,
        requested_hash: str = "",
    ) -> Reservation:
        """Create a started record of ``values`` (key first) unless the key has one; a new
        record is ``owner``'s for ``lease_s`` seconds, fence 1, and keeps the arguments'
        ``requested_hash`` (before normalization).

        One statement decides: the insert that skips an existing key returns the row it
        wrote (PostgreSQL's waits for a concurrent inserter and yields to it; SQLite's
        runs under the store's write lock). Only a key that exists is read back.
        """
        d = self._dialect
        now, at = self._now()
        row_values = (
            f"{d.params(len(values))}, 1, 'started', NULL, {now}, {now},"
            f" {d.param}, {now} + {d.param}, 1, {d.param}"
        )
        sql = d.insert_ignore(
            d.table("executions"), RECORD_COLUMNS, row_values, key="idempotency_key"
        )
        params = (*values, *at, *at, owner, *at, float(lease_s), requested_hash)
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
        run_owner: str | None = None,
    ) -> ExecutionRecord | None:
        """Apply ``assignments`` to ``key``'s record, stamp ``updated_at``, return the record
        (``RETURNING``: the same statement, not a second read); None if no row matched.

        ``uncommitted_only`` leaves a committed record as it is, ``fence`` one taken over
        since, ``run_owner`` one whose run's lease another worker holds or took. In
        PostgreSQL the update waits for a concurrent committer's row lock, then
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
        if run_owner is not None:  # and no other worker holds (or took) the run's lease
            locks = d.table("locks")
            sql += (
                f" AND NOT EXISTS (SELECT 1 FROM {locks} WHERE {locks}.key ="
                f" {d.param} || run_id AND {locks}.owner <> {d.param})"
            )
            where = (*where, RUN_KEY_PREFIX, run_owner)
        sql += f" RETURNING {RECORD_COLUMNS}"
        row = cur.execute(sql, (*params, *at, key, *where)).fetchone()
        return None if row is None else record_from_row(row)

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
        requested_hash: str = "",
    ) -> Reservation:
        """Create a ``started`` record for ``key`` unless one exists; durable on return.

        A new record is ``owner``'s for ``lease_s`` seconds. ``durable=False`` does not wait
        for the flush (see :meth:`_tx`): for a call with no side effect, whose record guards
        nothing but is still seen at once by every worker.
        """
        values = (key, run_id, call_id, tool, version, args_hash, attempt_id)
        return self._tx(
            "reserve an execution record",
            lambda cur: self._reserve(cur, values, owner, lease_s, requested_hash),
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
        rows = [(claim_row(c), c.owner, c.lease_s, c.requested_hash) for c in claims]

        def run(cur: Cursor) -> list[Reservation]:
            self._append(cur, log)
            return [self._reserve(cur, *row) for row in rows]

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

        A worker commits a run's record only while no other worker holds (or took) the
        run's lease (:meth:`lease_run`): a worker whose run was taken over is fenced.

        Raises:
            FencedOut: ``fence`` is given and another worker took the record over, or
                another worker holds the run's lease.
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
                cur,
                key,
                assignments,
                (body,),
                uncommitted_only=True,
                fence=fence,
                run_owner=worker_id(),
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
            if fence is None or record.fence == fence:
                raise _run_fenced_out(record, self.lease_run_holder(record.run_id))
            raise _fenced_out(record, fence)
        return record
