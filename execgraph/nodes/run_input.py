"""What the input of an ``invoke`` asks for: a task, or the last human message.

As with ``create_agent``, ``invoke({"messages": [HumanMessage("...")]}, cfg)`` asks for
what the last human message says: it becomes the goal of a task with the default frame.
A ``task`` is still accepted, and its own ``goal`` wins; a task without a goal takes the
last human message's.

A thread holds one run at a time. Once its run has finished, every input starts the
thread's next run (:func:`execgraph.nodes.admission.admit`), as every ``invoke`` of a
``create_agent`` graph runs it: a new human message is the next turn of the
conversation, a different task is the next request, and the same input again asks the
same thing again (a fresh run, its own budget; the model is asked anew). Which request
the current run answers is kept in state (``admitted``: a digest of the task, the id of
the human message, the run's number on the thread).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

__all__ = ["Request", "goal_of", "last_human", "new_request", "read_request", "run_seq"]

#: Fields of the previous task a follow-up human message keeps: what the thread may do
#: and spend. The goal, its deliverables and checks, and its identity are the message's.
_FRAME = (
    "allowed_actions",
    "stop_conditions",
    "budgets",
    "deadline_s",
    "approval_rules",
    "data_scope",
    "actor",
)


@dataclass(frozen=True)
class Request:
    """One request: the task spec to admit, the key that names it, and its number.

    Attributes:
        spec: The TaskSpec fields (``task``, or one made from a human message).
        key: What ``admitted`` records: the task's digest and the human message's id.
        seq: The run's number on its thread (1 for the first).
        from_message: The goal is the human message's (no task brought one).
    """

    spec: dict[str, Any]
    key: dict[str, Any]
    seq: int
    from_message: bool

    @property
    def admitted(self) -> dict[str, Any]:
        """The ``admitted`` value of a run answering this request."""
        return {**self.key, "seq": self.seq}


def last_human(messages: Sequence[BaseMessage] | None) -> HumanMessage | None:
    """The newest human message, if any."""
    for message in reversed(messages or []):
        if isinstance(message, HumanMessage):
            return message
    return None


def _digest(task: Mapping[str, Any] | None) -> str | None:
    if not task:
        return None
    body = json.dumps(task, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _key(task: Mapping[str, Any] | None, human: HumanMessage | None) -> dict[str, Any]:
    return {"task": _digest(task), "message": human.id if human is not None else None}


def _from_message(human: HumanMessage, frame: Mapping[str, Any] | None) -> dict[str, Any]:
    kept = {k: v for k, v in (frame or {}).items() if k in _FRAME}
    return {**kept, "goal": goal_of(human)}


def goal_of(human: HumanMessage) -> str:
    """What a human message asks, as a goal: its text; for a message of an image (a file,
    audio) alone, which kinds it attached — the model is shown the content itself
    (:mod:`execgraph.nodes.context.requests`)."""
    text = str(human.text)
    if text.strip() or not isinstance(human.content, list):
        return text
    kinds = [str(b.get("type")) for b in human.content if isinstance(b, dict) and b.get("type")]
    return f"(attached: {', '.join(dict.fromkeys(kinds))})" if kinds else ""


def read_request(state: Mapping[str, Any], seq: int = 1) -> Request:
    """The request of a thread's first input: its task, its goal from the last human
    message when the task names none."""
    task = dict(state.get("task") or {})
    human = last_human(state.get("messages"))
    if task.get("goal") or human is None:
        return Request(task, _key(task, human), seq, from_message=False)
    spec = {**task, "goal": goal_of(human)}
    return Request(spec, _key(spec, human), seq, from_message=True)


def new_request(state: Mapping[str, Any]) -> Request | None:
    """The request an input brings to a thread whose run has finished (None only for a
    thread admitted before requests were recorded, which keeps its contract).

    A changed task is the request (its goal, or the last human message's when it names
    none). A new human message alone is the next turn of the conversation: its text is
    the goal, in the frame of the thread's task (what the thread may do and spend; the
    last goal's deliverables and checks are not the new goal's). The same input again is
    the thread's task again, asked anew.
    """
    admitted = state.get("admitted")
    if admitted is None:  # admitted before requests were recorded: keep its contract
        return None
    seq = int(admitted.get("seq") or 1) + 1
    task = state.get("task")
    human = last_human(state.get("messages"))
    same_task = _digest(task) == admitted.get("task")  # no task came with it: the frame
    if human is not None and human.id != admitted.get("message") and same_task:
        spec = _from_message(human, task)
        return Request(spec, _key(spec, human), seq, from_message=True)
    return read_request(state, seq)


def run_seq(state: Mapping[str, Any]) -> int | None:
    """The run's number on its thread for the ``seq`` of its run events (None for the
    first run, whose event ids stay as they always were)."""
    seq = int((state.get("admitted") or {}).get("seq") or 1)
    return seq if seq > 1 else None
