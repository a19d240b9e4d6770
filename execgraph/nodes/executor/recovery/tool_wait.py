"""A tool's own question (``interrupt()`` inside it) is a wait with a deadline, like any other.

When a tool pauses the run (:mod:`.paused`), its wait is stamped by the execution store's
clock and logged as ``run.wait_started`` of the call (kind ``tool``: the tool, the call,
the interrupt it paused on, its question, since and until when, and what its expiry
does). The deadline and the policy are the task's wait rule for the tool
(``waits.tools[name]``, else ``waits``: :mod:`execgraph.state.waits`), the same rule its
approvals follow. The question itself is left as the tool asked it (a LangGraph client
reads its own value back); the run's status shows the wait beside it
(:func:`execgraph.engines.waits.tool_waits`).

The run resumes the call from its start (:mod:`.paused`). Before the tool runs again,
the stamp is judged by the same clock (:func:`resumed`): in time, the tool reads the
answer; past the deadline, the answer does not count and the policy decides:

- ``reject``: the call is committed failed (``WaitExpired``): the tool was interrupted
  and never resumed, so it did not complete;
- ``cancel``: the call is committed cancelled and the run is cancelled;
- ``escalate``: the tool's question is asked again, once, of ``escalate_to``, with a new
  deadline (the same interrupt, so its answer reaches the tool); if that one passes too,
  the call is rejected.

A run cancelled while a tool waits ends before the tool is run again (what resumes it is
the cancel's note, no answer): the call is committed ``cancelled`` and its wait ended
``cancelled`` (:func:`cancelled_with_run`), so no record is left paused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph.errors import GraphInterrupt
from langgraph.types import Interrupt

from execgraph.nodes.cancel import request_cancel
from execgraph.nodes.executor.call import Call, call_event
from execgraph.nodes.executor.recovery.paused import mark_paused, resumes_pause
from execgraph.nodes.executor.stages.commit import failure_result
from execgraph.nodes.executor.stages.lock import Locked
from execgraph.nodes.executor.stages.outcome import error_of
from execgraph.state.contracts import ObservationStatus, Outcome, SideEffect, ToolResult
from execgraph.state.errors import ToolCancelled, WaitExpired
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store.base import ExecutionRecord, ExecutionStore
from execgraph.state.waits import DEFAULT_WAIT_S, wait_deadline

__all__ = ["TOOL", "cancelled_with_run", "paused", "resumed"]

TOOL = "tool"
"""The ``kind`` of a tool's own wait (beside ``approval``, ``question`` and ``wait``)."""

_NOT_COMPLETED = SideEffect(
    attempted=True,
    committed=False,
    summary="interrupted at its own question, never resumed: did not complete",
)


def paused(call: Call, asked: GraphInterrupt, locked: Locked) -> None:
    """The tool raised ``asked`` (its ``interrupt()``): mark its record paused, free its
    locks, and stamp each of its interrupts' waits (once: a re-run that pauses on the same
    interrupt keeps the first stamp, so a wait's deadline never moves)."""
    mark_paused(call.deps.store, call.key, call.attempt_id, locked)
    for item in _interrupts(asked):
        _stamp(call, item.id, item.value)


def resumed(call: Call) -> ToolResult | None:
    """For a call resumed from its tool's pause, before the tool runs again: None when its
    wait was answered in time (the tool reads the answer), else what its expiry policy
    makes of the call (a result to commit).

    Raises:
        GraphInterrupt: the policy escalates: the tool's question is asked again.
    """
    wait = _current(call)
    if wait is None:
        return None
    store = call.deps.store
    if store.clock() <= wait["expires_at"]:
        _ended(call, wait, "answered")
        return None
    if wait["on_expiry"] == "escalate" and not wait.get("escalated_to"):
        rule = call.request.wait
        to = (rule.escalate_to if rule is not None else "") or "another person"
        again = _stamp(call, wait["interrupt_id"], wait["question"], escalated_to=to)
        mark_paused(store, call.key, call.attempt_id, Locked(keys=(), owner="", queued_ms=0))
        raise GraphInterrupt((Interrupt(value=again["question"], id=again["interrupt_id"]),))
    tool = call.request.tool.name
    why = f"{tool} asked a question (interrupt()) that expired unanswered"
    if wait["on_expiry"] == "cancel":
        _ended(call, wait, "expired: cancel")
        request_cancel(store, call.request.run_id, why)
        return _not_completed(call, ToolCancelled(f"{why}; the run is cancelled"))
    _ended(call, wait, "expired: reject")
    return _not_completed(
        call, WaitExpired(f"{why}: the call never resumed, so it did not complete")
    )


def cancelled_with_run(store: ExecutionStore, run_id: str, reason: str) -> None:
    """End each call of ``run_id`` that paused at its tool's own question, for a run
    cancelled while it waited: committed ``cancelled`` (the tool stopped at its question
    and never went on), its wait ended ``cancelled``. Idempotent: a call committed
    before keeps its result, a logged event is not logged twice."""
    for record in store.pending(run_id):
        if resumes_pause(record):
            _cancel_paused(store, record, reason)


def _cancel_paused(store: ExecutionStore, record: ExecutionRecord, reason: str) -> None:
    logged = store.events(record.run_id, call_id=record.call_id, types=[EventType.WAIT_STARTED])
    started = [e for e in logged if e.payload.get("kind") == TOOL]
    ids = {"call_id": record.call_id}
    events: list[Event] = []
    if started:
        last = started[-1]
        ids = {k: getattr(last, k) for k in ("call_id", "turn_id", "decision_id", "step_id")}
        seq, payload = _end_of(store, last.payload, "cancelled")
        events.append(
            make_event(EventType.WAIT_ENDED, record.run_id, seq=seq, payload=payload, **ids)
        )
    error = ToolCancelled(f"the run was cancelled while {record.tool} waited: {reason}")
    result = ToolResult(
        call_id=record.call_id,
        tool_name=record.tool,
        tool_version=record.version,
        outcome=Outcome.CANCELLED,
        status=ObservationStatus.CANCELLED,
        error=error_of(error),
        side_effect=_NOT_COMPLETED,
        idempotency_key=record.idempotency_key,
    )
    payload = {"outcome": result.outcome, "status": result.status}
    events.append(make_event(EventType.TOOL_COMPLETED, record.run_id, payload=payload, **ids))
    store.commit(record.idempotency_key, result.model_dump(mode="json"), events=events)


def _interrupts(asked: GraphInterrupt) -> list[Interrupt]:
    found = asked.args[0] if asked.args else ()
    return [i for i in found if isinstance(i, Interrupt)] if isinstance(found, tuple | list) else []


def _stamp(
    call: Call, interrupt_id: str, question: Any, escalated_to: str | None = None
) -> dict[str, Any]:
    """The wait's stamp, logged as ``run.wait_started`` of the call (the logged one if any)."""
    store = call.deps.store
    seq = f"{interrupt_id}:escalated" if escalated_to is not None else interrupt_id
    logged = store.event(call_event(call.request, EventType.WAIT_STARTED, seq=seq).event_id)
    if logged is not None:
        return dict(logged.payload)
    request = call.request
    now = store.clock()
    wait: dict[str, Any] = {
        "kind": TOOL,
        "run_id": request.run_id,
        "call_id": request.call_id,
        "tool": request.tool.name,
        "interrupt_id": interrupt_id,
        "question": _plain(question),
        "asked_at": now,
        "expires_at": wait_deadline(now, request.wait, DEFAULT_WAIT_S, request.deadline),
        "on_expiry": "reject"
        if escalated_to is not None or request.wait is None
        else request.wait.on_expiry,
    }
    if escalated_to is not None:
        wait["escalated_to"] = escalated_to
    store.append_events([call_event(request, EventType.WAIT_STARTED, seq=seq, payload=wait)])
    return wait


def _current(call: Call) -> dict[str, Any] | None:
    """The call's latest tool wait (an escalated one after the wait it replaced)."""
    logged: list[Event] = call.deps.store.events(
        call.request.run_id, call_id=call.request.call_id, types=[EventType.WAIT_STARTED]
    )
    waits = [dict(e.payload) for e in logged if e.payload.get("kind") == TOOL]
    return waits[-1] if waits else None


def _ended(call: Call, wait: dict[str, Any], how: str) -> None:
    """Log how the wait ended, and when (the store's clock): metrics count its time."""
    seq, payload = _end_of(call.deps.store, wait, how)
    ended = call_event(call.request, EventType.WAIT_ENDED, seq=seq, payload=payload)
    call.deps.store.append_events([ended])


def _end_of(store: ExecutionStore, wait: Mapping[str, Any], how: str) -> tuple[str, dict[str, Any]]:
    """A ``run.wait_ended``'s occurrence (one per wait, escalated or not) and payload."""
    payload = {"how": how, "kind": TOOL, "asked_at": wait["asked_at"], "ended_at": store.clock()}
    return str(wait["interrupt_id"]) + (":escalated" if wait.get("escalated_to") else ""), payload


def _not_completed(call: Call, error: WaitExpired | ToolCancelled) -> ToolResult:
    """The call's result: the tool ran to its question and never went on."""
    result = failure_result(call.request, error, tool_version=call.spec.version)
    cancelled = isinstance(error, ToolCancelled)
    return result.model_copy(
        update={
            "outcome": Outcome.CANCELLED if cancelled else Outcome.FAILED,
            "status": ObservationStatus.CANCELLED if cancelled else result.status,
            "side_effect": _NOT_COMPLETED,
        }
    )


def _plain(value: Any) -> Any:
    """The question as JSON (what an event holds)."""
    return json.loads(json.dumps(value, default=str))
