"""Versioned event types for the append-only event log.

Every event carries every id it knows (run, turn, decision, call, attempt, step), so a
trace can be cut along any of them. ``event_id`` is deterministic for an occurrence
(``run_id/call_id:type:attempt``), so an event re-emitted by a replayed node is deduplicated by
the store and by the state reducer instead of being counted twice.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from execgraph.state.surrogates import scrub_surrogates

__all__ = ["EVENT_SCHEMA_VERSION", "Event", "EventType", "make_event"]

EVENT_SCHEMA_VERSION = 1


class EventType(StrEnum):
    """The event vocabulary. Add members; never change the meaning of one."""

    RUN_ADMITTED = "run.admitted"
    RUN_REJECTED = "run.rejected"
    RUN_FINISHED = "run.finished"
    RUN_CANCEL_REQUESTED = "run.cancel_requested"
    CALL_CANCEL_REQUESTED = "tool.cancel_requested"  # one call's (by id or cancellation token)
    WAIT_STARTED = "run.wait_started"  # a question or an awaited event: since, until, expiry
    WAIT_ENDED = "run.wait_ended"  # answered, delivered or expired (and what expiry did)
    MODEL_CALLED = "model.called"
    DECISION_RECORDED = "decision.recorded"
    TOOL_REQUESTED = "tool.requested"
    TOOL_RESOLVED = "tool.resolved"
    TOOL_VALIDATION_FAILED = "tool.validation_failed"
    TOOL_DENIED = "tool.denied"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_RESOLVED = "approval.resolved"
    TOOL_STARTED = "tool.started"
    TOOL_OUTPUT = "tool.output"
    TOOL_RAISED = "tool.raised"  # for the developer: what tool code raised; never the model
    TOOL_SIDE_EFFECT_OBSERVED = "tool.side_effect_observed"
    TOOL_RECONCILED = "tool.reconciled"
    TOOL_COMPLETED = "tool.completed"
    TOOL_CANCELLING = "tool.cancelling"
    TOOL_ABANDONED = "tool.abandoned"
    TOOL_ENDED_LATE = "tool.ended_late"
    TOOL_SETTLED = "tool.settled"
    TOOL_RETRIED = "tool.retried"
    VERIFIER_VERDICT = "verifier.verdict"  # a finish judged: accepted, or rejected and why
    STATE_CHECKPOINTED = "state.checkpointed"


class Event(BaseModel):
    """One entry of the event log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = EVENT_SCHEMA_VERSION
    event_id: str
    type: EventType
    run_id: str
    turn_id: str | None = None
    decision_id: str | None = None
    call_id: str | None = None
    attempt_id: str | None = None
    step_id: str | None = None
    ts: float = Field(default_factory=time.time)
    payload: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("payload", when_used="json")
    def _writable(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload as JSON can hold it: a lone surrogate (model or tool text that is
        not valid Unicode) is written as its escape, so logging an event never fails."""
        return scrub_surrogates(payload)


def make_event(
    type: EventType,
    run_id: str,
    *,
    call_id: str | None = None,
    turn_id: str | None = None,
    decision_id: str | None = None,
    attempt_id: str | None = None,
    step_id: str | None = None,
    seq: str | int | None = None,
    payload: dict[str, Any] | None = None,
) -> Event:
    """Build an event whose id is stable for the same occurrence.

    ``seq`` distinguishes repeated occurrences of one type for one call (output chunks,
    a second approval after an edit).
    """
    anchor = call_id or turn_id
    parts = [f"{run_id}/{anchor}" if anchor else run_id, str(type)]
    if attempt_id:
        parts.append(attempt_id)
    if seq is not None:
        parts.append(str(seq))
    return Event(
        event_id=":".join(parts),
        type=type,
        run_id=run_id,
        turn_id=turn_id,
        decision_id=decision_id,
        call_id=call_id,
        attempt_id=attempt_id,
        step_id=step_id,
        payload=payload or {},
    )
