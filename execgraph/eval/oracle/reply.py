"""A decision of the suite's policies, and the chat message that carries it.

The oracle and the noisy policy decide in :class:`Reply` (calls, a plain text, or a
malformed reply) and never build LangChain messages themselves: :func:`to_message` is the
one place a decision becomes an ``AIMessage``, with the token usage that cost per success
is computed from and the ``response_metadata`` that says which fault or error it carries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from execgraph.eval.oracle.transcript import text_of
from execgraph.nodes.deps import CONTROL_TOOLS
from execgraph.testing.scripted import estimate_tokens

__all__ = ["CONTROLS", "Reply", "control", "to_message"]

CONTROLS = (*CONTROL_TOOLS, "submit_plan")
"""The runtime's control tools: offered beside the acting tools, never a step's tool."""


@dataclass
class Reply:
    """One decision: tool calls (name, args, id), a plain text, or a malformed reply."""

    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    text: str = ""
    malformed: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


def control(name: str, arg: str, text: str, turn: int) -> Reply:
    """One call of control tool ``name`` with its one text argument, at decision ``turn``."""
    return Reply(calls=[(name, {arg: text}, f"{name}~{turn}")])


def to_message(
    reply: Reply, messages: Sequence[BaseMessage], model_name: str, turn: int
) -> AIMessage:
    """The reply as the chat message of decision ``turn``, its usage estimated from text."""
    text_in = sum(estimate_tokens(text_of(m)) for m in messages)
    payload = [[n, a] for n, a, _ in reply.calls]
    text_out = estimate_tokens(json.dumps(payload) + reply.text)
    usage = {
        "input_tokens": text_in,
        "output_tokens": text_out,
        "total_tokens": text_in + text_out,
    }
    meta = {"model_name": model_name, **reply.meta}
    if reply.malformed:
        name = reply.calls[0][0] if reply.calls else "finish"
        bad = {
            "name": name,
            "args": '{"unterminated": ',
            "id": f"bad~{turn}",
            "error": "not JSON",
            "type": "invalid_tool_call",
        }
        return AIMessage(
            content="",
            invalid_tool_calls=[bad],
            usage_metadata=usage,
            response_metadata=meta,
        )
    calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in reply.calls]
    return AIMessage(
        content=reply.text,
        tool_calls=calls,
        usage_metadata=usage,
        response_metadata=meta,
    )
