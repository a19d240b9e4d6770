"""Wait for the outside: the model's question to a person (``ask_user``), or an event it
waits for (``wait_for``). The run waits (status WAITING) on a LangGraph interrupt.

Every wait has a deadline (:mod:`execgraph.state.waits`). Its start is stamped by the
execution store's clock and logged as ``run.wait_started`` before the pause (idempotent by id,
so the node, which runs again from its start on resume, reads the same stamp). An answer
or event that arrives after the deadline does not count: the wait expired, and its policy
decides — ``reject`` (the model is told nothing came, the run goes on), ``cancel`` (the run
is cancelled), or ``escalate`` (asked once more, of someone else, with a new deadline).
How it ended (answered, expired, cancelled with the run) is logged as ``run.wait_ended``;
both events give the wait's time to metrics.

An event is delivered through the same resume path as an answer:
``Command(resume={"event": "<name>", "data": ...})`` (:func:`~execgraph.engines.answers.deliver`).
The model may wait only for the events its task names (``waits.events``).
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from execgraph.nodes.cancel import cancel_requested, request_cancel
from execgraph.nodes.deps import RunDeps
from execgraph.state.contracts import Decision, DecisionKind, RunStatus, TaskContract
from execgraph.state.events import EventType, make_event
from execgraph.state.schema import RunState
from execgraph.state.store.base import ExecutionStore
from execgraph.state.waits import DEFAULT_WAIT_S, wait_deadline

__all__ = ["ask_user"]

_WAITS = (DecisionKind.ASK_USER, DecisionKind.WAIT)


def ask_user(state: RunState, *, deps: RunDeps) -> dict[str, Any]:
    """Pause with the model's question (or its awaited event); the resume value is the
    answer (the event), unless the wait expired first."""
    decisions = [Decision.model_validate(d) for d in state.get("decisions") or []]
    asked = next(d for d in decisions if d.kind in _WAITS)
    contract = TaskContract.model_validate(state["contract"])
    turn = int(state.get("turn", 0))
    store = deps.executor.store
    if asked.kind is DecisionKind.WAIT and asked.content not in contract.waits.events:
        named = ", ".join(contract.waits.events) or "none"
        return _told(turn, asked, f"You may not wait for {asked.content!r} (events: {named}).")
    wait = _started(store, contract, asked, turn)
    answer = interrupt(wait)
    cancelled = cancel_requested(store, contract.run_id)  # then it resumed with the cancel's note
    if not cancelled and store.clock() > wait["expires_at"]:
        if wait["on_expiry"] == "escalate":
            to = contract.waits.escalate_to or "another person"
            wait = _started(store, contract, asked, turn, escalated_to=to)
            answer = interrupt(wait)
            cancelled = cancel_requested(store, contract.run_id)
        if not cancelled and store.clock() > wait["expires_at"]:
            return _expired(store, contract, asked, turn, wait)
    if cancelled:
        _ended(store, contract.run_id, turn, wait, "cancelled")
        return _told(turn, asked, "The run was cancelled while it waited.")
    _ended(store, contract.run_id, turn, wait, "answered")
    if asked.kind is DecisionKind.WAIT:
        data = answer.get("data") if isinstance(answer, dict) else answer
        return _told(turn, asked, f"The event {asked.content!r} arrived: {data}")
    text = answer.get("answer", "") if isinstance(answer, dict) else str(answer)
    return _told(turn, asked, f"The user answered: {text}")


def _started(
    store: ExecutionStore,
    contract: TaskContract,
    asked: Decision,
    turn: int,
    escalated_to: str | None = None,
) -> dict[str, Any]:
    """The wait's interrupt value, stamped by the store's clock when first asked (logged
    as ``run.wait_started``; a re-run of the node reads the logged stamp)."""
    seq = "escalated" if escalated_to is not None else None
    event = make_event(EventType.WAIT_STARTED, contract.run_id, turn_id=f"t{turn}", seq=seq)
    logged = store.event(event.event_id)
    if logged is not None:
        return dict(logged.payload)
    now = store.clock()
    waits = contract.waits
    wait: dict[str, Any] = {
        "kind": "wait" if asked.kind is DecisionKind.WAIT else "question",
        "run_id": contract.run_id,
        "asked_at": now,
        "expires_at": wait_deadline(now, waits, DEFAULT_WAIT_S, contract.deadline),
        "on_expiry": "reject" if escalated_to is not None else waits.on_expiry,
    }
    if asked.kind is DecisionKind.WAIT:
        wait["event"] = asked.content
    else:
        wait["question"] = asked.content
    if escalated_to is not None:
        wait["escalated_to"] = escalated_to
    stamped = make_event(
        EventType.WAIT_STARTED, contract.run_id, turn_id=f"t{turn}", seq=seq, payload=wait
    )
    store.append_events([stamped])
    return wait


def _ended(store: ExecutionStore, run_id: str, turn: int, wait: dict[str, Any], how: str) -> None:
    """Log how the wait ended, and when (the store's clock)."""
    payload = {"how": how, "kind": wait["kind"], "asked_at": wait["asked_at"]}
    payload["ended_at"] = store.clock()
    ended = make_event(EventType.WAIT_ENDED, run_id, turn_id=f"t{turn}", payload=payload)
    store.append_events([ended])


def _expired(
    store: ExecutionStore, contract: TaskContract, asked: Decision, turn: int, wait: dict[str, Any]
) -> dict[str, Any]:
    """The wait's deadline passed: its policy decides (the model is told either way)."""
    what = "question" if wait["kind"] == "question" else f"wait for {asked.content!r}"
    if wait["on_expiry"] == "cancel":
        _ended(store, contract.run_id, turn, wait, "expired: cancel")
        request_cancel(store, contract.run_id, f"the {what} expired unanswered")
        return _told(turn, asked, f"The {what} expired unanswered; the run is cancelled.")
    _ended(store, contract.run_id, turn, wait, "expired: reject")
    return _told(turn, asked, f"The {what} expired unanswered; go on without it.")


def _told(turn: int, asked: Decision, text: str) -> dict[str, Any]:
    """Back to the model, which reads ``text`` as the answer to its call."""
    return {
        "status": RunStatus.RUNNING.value,
        "decisions": [],
        "feedback": [
            {
                "id": f"t{turn}:answer",
                "turn": turn,
                "tool_call_id": asked.tool_call_id,
                "text": text,
            }
        ],
    }
