"""The run's whole transcript, rebuilt from its record: the model input of ``context="full"``.

State keeps windows (the newest turns, results and notes), so the projected context can
never show more than they hold. The full-history ablation (``context="full"``) must show every
turn, so it reads the run's record instead: each turn's accepted reply is its
``model.called`` event, the calls it made are its ``decision.recorded`` events, their
results are the committed execution records (a call refused before it was reserved has
only its refusal and end events), and a finish the verifier rejected is answered with its
``verifier.verdict``. What state still holds takes precedence: it is the same record,
newest, and it also holds what the log does not: a person's answer to ``ask_user`` (one
older than state's notes window reads ``not executed``). A thread's requests come from
its ``run.admitted`` events, each after the turns before it (:mod:`.requests`).

This reads the whole log on every turn, so a turn costs more as the run grows: that cost is
what the projection exists to avoid, and what the ablation measures. The default
(projected) context never comes here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, messages_from_dict

from execgraph.nodes.context.requests import is_request, request_record
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.model.call import compact_message
from execgraph.nodes.model.call_ids import distinct_call_ids
from execgraph.state.events import EventType

__all__ = ["WholeRecord", "whole_record"]

_REFUSED = (EventType.TOOL_DENIED, EventType.TOOL_VALIDATION_FAILED)

WholeRecord = tuple[list[dict[str, Any]], dict[str, dict[str, Any]], list[dict[str, Any]]]
"""(turn records as state's ``history`` holds them, results by call id, notes by call)."""


def _turn_number(turn_id: str) -> int:
    digits = turn_id[1:]
    return int(digits) if digits.isdigit() else -1


def _position(record: Mapping[str, Any]) -> tuple[int, int]:
    """Where a record goes: a model turn at its number, a request after the turn before it."""
    if is_request(record):
        return int(record.get("turn", 0)), 1
    return _turn_number(str(record["id"])), 0


def whole_record(state: Mapping[str, Any], run_id: str, deps: RunDeps) -> WholeRecord:
    """Every decision turn of the run, oldest first, with every call's result and note."""
    store = deps.executor.store
    replies: dict[str, Mapping[str, Any]] = {}
    calls: dict[str, dict[str, str]] = {}
    finishes: dict[str, str] = {}
    notes: list[dict[str, Any]] = []
    refused: dict[str, dict[str, Any]] = {}
    requests: dict[str, dict[str, Any]] = {}
    last_turn = 0
    for event in store.events(run_id):
        payload, turn_id, call_id = event.payload, event.turn_id, event.call_id
        if event.type is EventType.MODEL_CALLED and turn_id:
            last_turn = max(last_turn, _turn_number(turn_id))
        if event.type is EventType.RUN_ADMITTED and payload.get("seq"):
            asked = request_record(int(payload["seq"]), last_turn, str(payload.get("goal")))
            requests[asked["id"]] = asked
        elif event.type is EventType.MODEL_CALLED and turn_id and not payload.get("refused"):
            replies[turn_id] = payload["message"]
        elif event.type is EventType.DECISION_RECORDED and turn_id:
            made = calls.setdefault(turn_id, {})
            if payload.get("call_id") and payload.get("tool_call_id"):
                made[str(payload["tool_call_id"])] = str(payload["call_id"])
            if payload.get("kind") == "finish" and payload.get("tool_call_id"):
                finishes[turn_id] = str(payload["tool_call_id"])
        elif event.type is EventType.VERIFIER_VERDICT and turn_id in finishes:
            if payload.get("failed"):
                text = "finish rejected: " + "; ".join(map(str, payload["failed"]))
                notes.append({"tool_call_id": finishes[str(turn_id)], "text": text})
        elif event.type in _REFUSED and call_id:
            error = {"type": payload.get("type"), "message": payload.get("message")}
            refused[call_id] = {"call_id": call_id, "outcome": "failed", "error": error}
        elif event.type is EventType.TOOL_COMPLETED and call_id in refused:
            ended = {"outcome": payload.get("outcome"), "status": payload.get("status")}
            refused[str(call_id)].update(ended)
    kept = {str(t["id"]): t for t in state.get("history") or [] if t.get("id")}
    turns = {**requests, **kept}
    for turn_id, message in replies.items():
        if turn_id in calls and turn_id not in turns:  # a decision turn state let go of
            [ai] = messages_from_dict([dict(message)])
            assert isinstance(ai, AIMessage)
            shown = compact_message(distinct_call_ids(ai, turn_id))
            turns[turn_id] = {"id": turn_id, "ai": shown, "calls": calls[turn_id]}
    ordered = sorted(turns.values(), key=_position)
    results: dict[str, dict[str, Any]] = dict(refused)
    for record in store.committed(run_id):
        if record.result is not None:
            results[record.call_id] = record.result
    results.update(state.get("results") or {})
    return ordered, results, [*notes, *(state.get("feedback") or [])]
