"""Reading execution records over SQL: one by key, a run's pending or committed ones, and
what they add up to (outcome counts, evidence).

Nothing here writes; the record writes (:mod:`.sql`) read through :meth:`SqlRecordReads._get`
inside their own transactions, under a row lock when they decide on what they read.
"""

from __future__ import annotations

import json
from typing import Any

from execgraph.state.store.base import ExecutionRecord, OutcomeCount
from execgraph.state.store.dialect import Cursor
from execgraph.state.store.rows import RECORD_COLUMNS, record_from_row
from execgraph.state.store.sql_append_only import SqlLog

__all__ = ["SqlRecordReads"]


class SqlRecordReads(SqlLog):
    """Reads of the ``executions`` table."""

    # -- a statement used inside several transactions ---------------------------------

    def _get(self, cur: Cursor, key: str, *, for_update: bool = False) -> ExecutionRecord | None:
        d = self._dialect
        sql = f"SELECT {RECORD_COLUMNS} FROM {d.table('executions')} WHERE idempotency_key = "
        sql += d.param + (d.lock_row if for_update else "")
        row = cur.execute(sql, (key,)).fetchone()
        return None if row is None else record_from_row(row)

    # -- execution records ------------------------------------------------------------

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
