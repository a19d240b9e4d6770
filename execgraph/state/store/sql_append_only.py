"""The append-only half of the SQL store: events, artifacts and approval tokens.

Nothing here reads a row to decide what to write: each statement inserts unless its key
exists, so concurrent writers need no lock beyond the statement. :class:`SqlLog` also names
the primitives every SQL backend provides (a transaction, a read, its clock, closing);
:class:`~execgraph.state.store.sql.SqlExecutionStore` adds the execution records and locks
(:mod:`.sql_locks`, :mod:`.sql_reads`, :mod:`.sql_leases`), whose writes decide on what they read.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from types import TracebackType
from typing import Any, ClassVar, Self, TypeVar

from execgraph.state.errors import StoreError
from execgraph.state.events import Event
from execgraph.state.store.dialect import Cursor, Dialect
from execgraph.state.store.live import note_appended, streamed
from execgraph.state.store.rows import (
    EVENT_COLUMNS,
    EVENT_SELECT,
    artifact_ref,
    event_from_row,
    event_to_row,
)
from execgraph.state.store.shared_values import restore_shared, share_long_strings, shared_refs

__all__ = ["SqlLog"]

_ARTIFACT_COLUMNS = "ref, kind, run_id, size, data, created_at"
_EVENTS_PER_STATEMENT = 500  # well under either driver's limit on parameters

_T = TypeVar("_T")


class SqlLog(ABC):
    """Events, artifacts and approval tokens on SQL tables, over a backend's primitives."""

    _dialect: ClassVar[Dialect]

    # -- what each backend provides ----------------------------------------------------

    @abstractmethod
    def _tx(self, what: str, fn: Callable[[Cursor], _T], *, durable: bool = True) -> _T:
        """Run ``fn`` in one write transaction; a failure to ``what`` is a StoreError.

        ``durable=False`` commits without waiting for the flush to disk: the change is
        visible at once and durable from the next flush.
        """

    @abstractmethod
    def _read(self, what: str, fn: Callable[[Cursor], _T]) -> _T:
        """Run a read; a failure to ``what`` is a StoreError."""

    @abstractmethod
    def _now(self) -> tuple[str, tuple[Any, ...]]:
        """SQL for the time now, and the parameters it takes."""

    def clock(self) -> float:
        """The store's time now (:meth:`ExecutionStore.clock`)."""
        now, at = self._now()
        return self._read(
            "read the store's clock",
            lambda cur: float(cur.execute(f"SELECT {now}", at).fetchone()[0]),
        )

    @abstractmethod
    def close(self) -> None:
        """Release the connections; later calls raise StoreError. Safe to call twice."""

    # -- statements used inside several transactions ----------------------------------

    def _append(self, cur: Cursor, events: Sequence[Event]) -> list[str]:
        """Insert ``events`` in one statement per chunk; the ids that were new, in order.

        One statement, not one per event: each is a round trip, and in SQLite a release
        of the GIL that another thread (LangGraph's checkpoint writer) may hold a while.
        """
        d = self._dialect
        values = d.params(len(EVENT_COLUMNS) + 1)  # the columns, then the payload
        added: list[str] = []
        for start in range(0, len(events), _EVENTS_PER_STATEMENT):
            chunk = events[start : start + _EVENTS_PER_STATEMENT]
            sql = d.insert_ignore(
                d.table("events"), EVENT_SELECT, values, key="event_id", rows=len(chunk)
            )
            params = [value for event in chunk for value in self._row(cur, event)]
            new = {row[0] for row in cur.execute(sql + " RETURNING event_id", params).fetchall()}
            fresh = []
            for event in chunk:  # RETURNING's order is unspecified; an id repeated counts once
                if event.event_id in new:
                    new.discard(event.event_id)
                    added.append(event.event_id)
                    fresh.append(event)
            note_appended(fresh)  # streamed once the transaction commits (see live.py)
        return added

    def _row(self, cur: Cursor, event: Event) -> tuple[Any, ...]:
        """The event's row, its long strings stored once beside it (see shared_values)."""
        *columns, body = event_to_row(event)

        def put(ref: str, data: bytes) -> None:
            values = (ref, "event_value", event.run_id, len(data), data)
            self._insert_stamped(cur, "artifacts", _ARTIFACT_COLUMNS, values, key="ref")

        return (*columns, share_long_strings(body, put))

    def _events_from(self, cur: Cursor, rows: Sequence[Sequence[Any]]) -> list[Event]:
        """Events from their rows, with the strings stored once put back."""
        refs = set().union(*(shared_refs(row[-1]) for row in rows)) if rows else set()
        if not refs:
            return [event_from_row(row) for row in rows]
        d = self._dialect
        marks = ", ".join([d.param] * len(refs))
        sql = f"SELECT ref, data FROM {d.table('artifacts')} WHERE ref IN ({marks})"
        data = {ref: bytes(blob) for ref, blob in cur.execute(sql, tuple(refs)).fetchall()}
        return [event_from_row((*row[:-1], restore_shared(row[-1], data))) for row in rows]

    def _insert_stamped(
        self, cur: Cursor, table: str, columns: str, values: tuple[Any, ...], *, key: str
    ) -> bool:
        """Insert ``values`` and the time now (the last column) unless ``key`` exists yet."""
        d = self._dialect
        now, at = self._now()
        stamped = f"{d.params(len(values))}, {now}"
        sql = d.insert_ignore(d.table(table), columns, stamped, key=key)
        return cur.execute(sql, (*values, *at)).rowcount == 1

    # -- events -----------------------------------------------------------------------

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        """Append events, ignoring ids already logged; returns the ids newly appended.

        ``durable=False`` does not wait for the flush (see :meth:`_tx`), for events no
        effect depends on yet: they reach the disk with the next durable write.
        """
        if not events:
            return []
        with streamed():
            return self._tx("append events", lambda cur: self._append(cur, events), durable=durable)

    def events(
        self, run_id: str, *, call_id: str | None = None, types: Collection[str] | None = None
    ) -> list[Event]:
        """A run's events in append order (optionally one call's, or only ``types``)."""
        d = self._dialect
        sql = f"SELECT {EVENT_SELECT} FROM {d.table('events')} WHERE run_id = {d.param}"
        params: tuple[str, ...] = (run_id,)
        if call_id is not None:
            sql += f" AND call_id = {d.param}"
            params = (*params, call_id)
        if types is not None:
            chosen = sorted({str(getattr(t, "value", t)) for t in types})
            sql += f" AND type IN ({', '.join([d.param] * len(chosen))})" if chosen else " AND 0=1"
            params = (*params, *chosen)
        sql += " ORDER BY seq"
        return self._read(
            "read events", lambda cur: self._events_from(cur, cur.execute(sql, params).fetchall())
        )

    def event(self, event_id: str) -> Event | None:
        """One event by its id, if logged (ids are deterministic per occurrence)."""
        d = self._dialect
        sql = f"SELECT {EVENT_SELECT} FROM {d.table('events')} WHERE event_id = {d.param}"
        rows = self._read(
            "read an event",
            lambda cur: self._events_from(cur, cur.execute(sql, (event_id,)).fetchall()),
        )
        return rows[0] if rows else None

    def has_event(self, run_id: str, type: str) -> bool:
        """Whether the run logged an event of ``type`` (a cancel request, say)."""
        d = self._dialect
        sql = f"SELECT 1 FROM {d.table('events')} WHERE run_id = {d.param} AND type = {d.param}"
        sql += " LIMIT 1"
        row = self._read("read events", lambda cur: cur.execute(sql, (run_id, type)).fetchone())
        return row is not None

    # -- artifacts and approval tokens ------------------------------------------------

    def put_artifact(self, data: bytes, *, kind: str, run_id: str = "") -> str:
        """Store bulky bytes once; returns their content address (``sha256:<hex>``)."""
        ref = artifact_ref(data)
        values = (ref, kind, run_id, len(data), data)
        self._tx(
            "store an artifact",
            lambda cur: self._insert_stamped(
                cur, "artifacts", _ARTIFACT_COLUMNS, values, key="ref"
            ),
        )
        return ref

    def get_artifact(self, ref: str) -> bytes:
        """Bytes for a ref.

        Raises:
            KeyError: No artifact has that ref.
        """
        d = self._dialect
        sql = f"SELECT data FROM {d.table('artifacts')} WHERE ref = {d.param}"
        row = self._read("read an artifact", lambda cur: cur.execute(sql, (ref,)).fetchone())
        if row is None:
            raise KeyError(ref)
        return bytes(row[0])

    def use_approval_token(self, token_id: str) -> bool:
        """Mark a token used; True only the first time (tokens are single-use)."""
        columns, values = "token_id, used_at", (token_id,)
        return self._tx(
            "record an approval token",
            lambda cur: self._insert_stamped(
                cur, "approval_tokens", columns, values, key="token_id"
            ),
        )

    def decide_approval(self, request_id: str, decision: dict[str, Any]) -> dict[str, Any]:
        """Record ``decision`` for the approval request unless one is; return the one that
        stands. One insert-once row per request: of two answers at once, the first wins."""
        try:
            body = json.dumps(decision, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError("the approval decision is not JSON-serializable") from exc
        d = self._dialect
        sql = f"SELECT decision FROM {d.table('approval_decisions')} WHERE request_id = {d.param}"

        def run(cur: Cursor) -> dict[str, Any]:
            columns = "request_id, decision, decided_at"
            table = "approval_decisions"
            self._insert_stamped(cur, table, columns, (request_id, body), key="request_id")
            stands: dict[str, Any] = json.loads(cur.execute(sql, (request_id,)).fetchone()[0])
            return stands

        return self._tx("record an approval decision", run)

    # -- lifecycle --------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
