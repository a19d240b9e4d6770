"""The event log, streamed as it is written: ``stream_mode="custom"`` carries each event.

Every event of a run reaches the execution store through one statement (``SqlLog._append``),
which also says which events were new: an id already logged is a replay (a node re-run
after an interrupt or a crash re-derives its events with their deterministic ids) and
inserts nothing. The transaction that appended them hands exactly the new ones, once it
has committed, to LangGraph's stream writer of the graph run it happens in, if any. So a
``stream(..., stream_mode="custom")`` sees each event of the versioned log once, as it
becomes durable (a call's request, resolution and start as its tool starts, its end with
the call's commit; a turn's model reply and decisions with its calls' reservation;
approvals, run admission and end), and never one that a rolled-back transaction did not
write.

Tool output (``tool.output``) is the exception: the executor streams each piece while the
tool runs, so its log entries are not sent again; and ``state.checkpointed`` is only
logged (:data:`LOG_ONLY`). Outside a graph run (a CLI command, a watcher thread) there is
no writer and nothing is sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langgraph.config import get_stream_writer

from execgraph.state.events import Event, EventType

__all__ = ["LOG_ONLY", "event_chunk", "note_appended", "streamed"]

_APPENDED: ContextVar[list[Event] | None] = ContextVar("execgraph_appended_events", default=None)

#: Streamed by the executor as the tool produces it, not again from the log.
_LIVE_ALREADY = frozenset({EventType.TOOL_OUTPUT})

LOG_ONLY = frozenset({*_LIVE_ALREADY, EventType.STATE_CHECKPOINTED})
"""Logged kinds the custom stream does not carry from the log: tool output (streamed live,
as the tool produces it) and ``state.checkpointed`` (LangGraph writes checkpoints off the
node's thread, and ``stream_mode="checkpoints"`` streams them itself)."""


def event_chunk(event: Event) -> dict[str, Any]:
    """One event as a custom stream chunk: its fields, with ``kind`` = its type (the key
    every execgraph chunk carries; a chunk with an ``event_id`` is a logged event)."""
    return {
        "kind": str(event.type),
        "event_id": event.event_id,
        "type": str(event.type),
        "schema_version": event.schema_version,
        "run_id": event.run_id,
        "turn_id": event.turn_id,
        "decision_id": event.decision_id,
        "call_id": event.call_id,
        "attempt_id": event.attempt_id,
        "step_id": event.step_id,
        "ts": event.ts,
        "payload": dict(event.payload),
    }


def note_appended(events: Sequence[Event]) -> None:
    """Record events a statement has just appended (new ids only), for :func:`streamed`."""
    pending = _APPENDED.get()
    if pending is not None:
        pending.extend(events)


def _writer() -> Any:
    try:
        return get_stream_writer()
    except Exception:  # not inside a graph run: nobody streams
        return None


@contextmanager
def streamed() -> Iterator[None]:
    """Around one store transaction: once it commits, stream the events it appended."""
    pending: list[Event] = []
    token = _APPENDED.set(pending)
    try:
        yield
    finally:
        _APPENDED.reset(token)
    # Reached only when the transaction committed (an exception skips this).
    if not pending:
        return
    writer = _writer()
    if writer is None:
        return
    for event in pending:
        if event.type not in LOG_ONLY:
            writer(event_chunk(event))
