"""Reading the transcript: what the oracle's input shows it, as a :class:`Seen`.

The oracle decides from what the runtime shows it and nothing else, so this is the one
place that knows the transcript's shape: the goal line, the ``<tool_output>`` blocks
(answering a call, or quoted per step in a prompt), and the verifier's rejections. Call
ids carry the step id (``<step>~<n>``), which is how an observation is traced back to its
step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from execgraph.eval.tasks.common import Seen

__all__ = ["observe", "text_of"]

# An old observation ends with the runtime's note of its age: "(observed 2 h ago)".
_BLOCK = re.compile(
    r'^<tool_output tool="[^"]*" untrusted="true">\n(.*)\n</tool_output>(?:\n\(observed [^)]*\))?$',
    re.S,
)
_STEP = re.compile(
    r'step ([A-Za-z0-9_.-]+): <tool_output tool="[^"]*" untrusted="true">\n(.*?)\n</tool_output>',
    re.S,
)
_STATUS = re.compile(r'"status": "([A-Z_]+)"')
_GOAL = re.compile(r"^Task: (.*?)(?:\n\nCurrent step:|$)", re.S)
_REJECTED = ("finish rejected", "Replanning because: evidence gap")


def text_of(message: BaseMessage) -> str:
    """A message's content as text."""
    return message.content if isinstance(message.content, str) else str(message.content)


def _body(block: str) -> tuple[str, Any]:
    """(status, data) of one observation body (a truncated one keeps its status only)."""
    try:
        parsed = json.loads(block)
    except json.JSONDecodeError:
        status = _STATUS.search(block)
        return (status.group(1) if status else "UNKNOWN"), None
    return str(parsed.get("status") or ""), parsed.get("data")


def _record(seen: Seen, step_id: str, block: str) -> None:
    status, data = _body(block)
    seen.status[step_id] = status
    if status == "OK":
        seen.data[step_id] = data


def observe(messages: Sequence[BaseMessage]) -> Seen:
    """What the input shows: the goal, each step's latest observation, any rejection."""
    seen = Seen()
    calls: dict[str, str] = {}  # tool call id -> step id
    for message in messages:
        text = text_of(message)
        if not seen.goal and (goal := _GOAL.match(text)):
            seen.goal = goal.group(1)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id") and "~" in str(call["id"]):
                    calls[str(call["id"])] = str(call["id"]).split("~", 1)[0]
        elif isinstance(message, ToolMessage) and message.tool_call_id in calls:
            block = _BLOCK.match(text.strip())
            if block:
                _record(seen, calls[message.tool_call_id], block.group(1))
        for step_id, block in _STEP.findall(text):
            _record(seen, step_id, block)
        if any(marker in text for marker in _REJECTED):
            seen.rejections.append(text[:200])
    return seen
