"""A thread's requests among the turns the model sees.

A thread answers one request after another (a human message, or a task): each run's
request is recorded in state's ``history`` window beside the model's turns, as
``{"id": "request:<n>", "turn": <the last turn before it>, "human": <its text>}``, and the
id of the human message that asked it (``"message"``). The model input renders an earlier
request as the human message it was, in its place in the conversation, and the current
one as the task (:mod:`.projection`). So on a thread's second message the model sees the
first one and what it answered, as with ``create_agent``; the turns it does not see
(beyond ``history_turns``) take their requests with them.

What a human message holds besides its text (an image, a file, audio: content blocks)
is shown with its request, taken from the message itself in state's ``messages`` (not
copied into the record: an image is not stored twice); a message no longer there leaves
its request as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "attachments",
    "current_request",
    "is_request",
    "recent_records",
    "request_record",
]


def request_record(seq: int, turn: int, text: str, message: str | None = None) -> dict[str, Any]:
    """The ``history`` record of a thread's ``seq``-th request, made after turn ``turn``,
    asked by the human message ``message`` (its id)."""
    record: dict[str, Any] = {"id": f"request:{seq}", "turn": turn, "human": text}
    if message:
        record["message"] = message
    return record


def attachments(messages: Sequence[Any] | None) -> dict[str, list[dict[str, Any]]]:
    """The content blocks other than text (images, files, audio) of every human message
    that has any, by message id."""
    found: dict[str, list[dict[str, Any]]] = {}
    for message in messages or ():
        content = getattr(message, "content", None)
        if getattr(message, "type", None) != "human" or not isinstance(content, list):
            continue
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") != "text"]
        if blocks and message.id:
            found[str(message.id)] = blocks
    return found


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
