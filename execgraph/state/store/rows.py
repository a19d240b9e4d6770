"""How execution records, events and artifacts become table rows, in every SQL backend.

SQLite and PostgreSQL keep the same columns in the same order, so one set of conversions
serves both: a row reads back the same whichever backend wrote it, and an older row layout
(a whole-event payload) keeps reading as it did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from execgraph.state.events import Event
from execgraph.state.store.base import Claim, ExecutionRecord

__all__ = [
    "EVENT_COLUMNS",
    "EVENT_SELECT",
    "RECORD_COLUMNS",
    "artifact_ref",
    "claim_row",
    "event_from_row",
    "event_to_row",
    "record_from_row",
]

_RECORD_FIELDS = tuple(field.name for field in fields(ExecutionRecord))

#: The executions table's columns, in :class:`ExecutionRecord` field order.
RECORD_COLUMNS = ", ".join(_RECORD_FIELDS)

#: The events table's columns that hold one event field each (``payload`` holds the rest).
EVENT_COLUMNS = ("event_id", "run_id", "call_id", "type", "schema_version", "ts")

#: What an event row is written and read as: the columns, then the payload.
EVENT_SELECT = ", ".join((*EVENT_COLUMNS, "payload"))


def record_from_row(row: Sequence[Any]) -> ExecutionRecord:
    """An execution record from its row (columns as in :data:`RECORD_COLUMNS`)."""
    values = dict(zip(_RECORD_FIELDS, row, strict=True))
    values["result"] = None if values["result"] is None else json.loads(values["result"])
    return ExecutionRecord(**values)


def event_to_row(event: Event) -> tuple[Any, ...]:
    """The events-table row: the columns, then a payload of only what they do not hold.

    An event is written six times a step; repeating its ids and type inside the payload
    made a row ~40% larger. None fields are left out too: they come back on load.
    """
    body = event.model_dump_json(exclude_none=True, exclude=set(EVENT_COLUMNS))
    return (*(getattr(event, c) for c in EVENT_COLUMNS), body)


def event_from_row(row: Sequence[Any]) -> Event:
    """An event back from its row (either layout: a whole-event payload reads the same)."""
    *columns, payload = row
    values = json.loads(payload)
    values.update((c, v) for c, v in zip(EVENT_COLUMNS, columns, strict=True) if v is not None)
    return Event.model_validate(values)


def artifact_ref(data: bytes) -> str:
    """The content address of ``data`` (same bytes, same ref, in every backend)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def claim_row(claim: Claim) -> tuple[str, ...]:
    """A claim as the row it reserves, columns in order (``astuple`` would deep-copy each)."""
    return (
        claim.key,
        claim.run_id,
        claim.call_id,
        claim.tool,
        claim.version,
        claim.args_hash,
        claim.attempt_id,
    )
