"""A ``create_agent`` tool call as the executor's request, and the key of its record.

The agent's thread is the run: its events, records and approvals are filed under the
thread id, as an execgraph run's are under its run id. A call's execution record is keyed
by the thread, the model's turn (how many model replies the conversation holds up to the
one that made the call), the model's tool call id and the hash of the arguments the
model sent: a resume, a re-run from an earlier checkpoint (time travel) or a restart
after a crash meets the same tool call in the agent's state again and finds its record,
so the result recorded then is replayed, not the tool run again. A model that reuses an
id for other arguments gets another record, and so does one whose ids repeat from turn
to turn (some providers number a reply's calls ``0``, ``1``, ...): a later turn's call is
a new call.

The model's tool call id is data: it is part of the call id only when it is a plain id
(letters, digits, ``-``, ``_``, ``.``; at most 64), else its hash is. The message that
answers the model still carries the model's id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.nodes.executor import stable_hash
from execgraph.state.contracts import ToolExecutionRequest, ToolRef, Workspace
from execgraph.state.errors import UsageError

__all__ = ["MISSING_THREAD", "call_id_of", "record_key", "thread_of", "tool_request", "turn_of"]

MISSING_THREAD = (
    "ExecutorMiddleware needs the agent's thread id: compile the agent with a checkpointer "
    'and pass config={"configurable": {"thread_id": "..."}}'
)

_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def thread_of(config: Mapping[str, Any] | None) -> str:
    """The agent's thread id.

    Raises:
        UsageError: the run has none (no record could be found again without it).
    """
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    if thread is None or str(thread) == "":
        raise UsageError(MISSING_THREAD)
    return str(thread)


def turn_of(messages: Sequence[Any], tool_call_id: str | None) -> int:
    """The model's turn that made the call: how many model replies the conversation holds
    up to the last one carrying ``tool_call_id`` (0: no reply carries it)."""
    replies = [m for m in messages if getattr(m, "type", None) == "ai"]
    for turn in range(len(replies), 0, -1):
        calls = getattr(replies[turn - 1], "tool_calls", None) or []
        if any(c.get("id") == tool_call_id for c in calls):
            return turn
    return 0


def call_id_of(turn: int, tool_call_id: str | None, name: str, args: Any) -> str:
    """The executor's call id for the model's tool call in ``turn``."""
    if tool_call_id and _PLAIN_ID.fullmatch(tool_call_id):
        return f"t{turn}-{tool_call_id}"
    return f"t{turn}-h" + stable_hash([tool_call_id, name, args])[:24]


def record_key(thread: str, call_id: str, args: Any) -> str:
    """The execution record's key: thread, call (turn and id), and the arguments as the
    model sent them."""
    return f"agent:{thread}:{call_id}:{stable_hash(args)[:32]}"


def tool_request(
    tool_call: Mapping[str, Any],
    *,
    thread: str,
    turn: int,
    workspace: str,
    deadline: float | None = None,
) -> ToolExecutionRequest:
    """The executor's request for one tool call of the model."""
    name = str(tool_call.get("name") or "")
    args = tool_call.get("args")
    arguments = dict(args) if isinstance(args, Mapping) else {}
    model_id = tool_call.get("id")
    tool_call_id = str(model_id) if model_id else None
    call_id = call_id_of(turn, tool_call_id, name, arguments)
    return ToolExecutionRequest(
        run_id=thread,
        turn_id=f"t{turn}",
        call_id=call_id,
        tool=ToolRef(name=name),
        arguments=arguments,
        workspace=Workspace(root=workspace),
        deadline=deadline,
        idempotency_key=record_key(thread, call_id, arguments),
        tool_call_id=tool_call_id or call_id,
    )
