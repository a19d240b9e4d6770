"""Who runs an uncommitted execution record: a worker's lease on it, renewed while its
call runs, and the takeover of one whose lease expired or whose owner is gone.

Each takeover raises the record's fence, so a worker whose lease lapsed finds, at commit,
that the record is no longer its own (:class:`~execgraph.state.errors.FencedOut`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from execgraph.state.store.base import ExecutionRecord
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.rows import RECORD_COLUMNS, record_from_row
from execgraph.state.store.sql_append_only import SqlLog
from execgraph.state.store.sql_locks import RUN_KEY_PREFIX

__all__ = ["SqlLeases"]


class SqlLeases(SqlLog):
    """Leases on the ``executions`` table's uncommitted records."""

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

    def holds_fence(self, key: str, owner: str, fence: int) -> bool:
        """Whether ``owner`` still holds ``key``'s uncommitted record at ``fence``, and no
        other worker holds (or took) its run's lease: what :meth:`commit` would require,
        read in one statement, so a tool can ask it right before its effect."""
        d = self._dialect
        locks = d.table("locks")
        sql = (
            f"SELECT 1 FROM {d.table('executions')} WHERE idempotency_key = {d.param}"
            f" AND owner = {d.param} AND fence = {d.param} AND state = 'started'"
            f" AND NOT EXISTS (SELECT 1 FROM {locks} WHERE {locks}.key = {d.param} || run_id"
            f" AND {locks}.owner <> {d.param})"
        )

        def run(cur: Cursor) -> bool:
            row = cur.execute(sql, (key, owner, fence, RUN_KEY_PREFIX, owner)).fetchone()
            return row is not None

        return self._read("check a fence", run)
