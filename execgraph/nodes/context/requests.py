"""A thread's requests among the turns the model sees.

A thread answers one request after another (a human message, or a task): each run's
request is recorded in state's ``history`` window beside the model's turns, as
``{"id": "request:<n>", "turn": <the last turn before it>, "human": <its text>}``. The
model input renders an earlier request as the human message it was, in its place in the
conversation, and the current one as the task (:mod:`.projection`). So on a thread's
second message the model sees the first one and what it answered, as with
``create_agent``; the turns it does not see (beyond ``history_turns``) take their
requests with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["current_request", "is_request", "recent_records", "request_record"]


def request_record(seq: int, turn: int, text: str) -> dict[str, Any]:
    """The ``history`` record of a thread's ``seq``-th request, made after turn ``turn``."""
    return {"id": f"request:{seq}", "turn": turn, "human": text}


def is_request(record: Mapping[str, Any]) -> bool:
    """True for a request's record, False for a model turn's."""
    return "human" in record


def current_request(state: Mapping[str, Any]) -> str:
    """The record id of the request the current run answers."""
    return f"request:{int((state.get('admitted') or {}).get('seq') or 1)}"


def recent_records(records: Sequence[Mapping[str, Any]], turns: int) -> list[Mapping[str, Any]]:
    """The newest ``turns`` model turns, with the requests among them and the request
    that asked for the first of them."""
    model = [i for i, r in enumerate(records) if not is_request(r)]
    if len(model) <= turns:
        return list(records)
    if turns <= 0:
        return []
    start = model[-turns]
    while start > 0 and is_request(records[start - 1]):
        start -= 1
    return list(records[start:])
