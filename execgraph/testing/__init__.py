"""Test doubles a user may import: a chat model that replays a script.

``ScriptedChatModel`` replays ``AIMessage``s (tool calls included) in order and fails
loudly when asked for a reply its script does not have, so a test of an agent built on
execgraph runs offline and deterministically, as ``temporalio.testing`` or the OpenAI
Agents SDK's fake models do for theirs.
"""

from execgraph.testing.scripted import (
    Reply,
    ScriptedChatModel,
    ScriptExhausted,
    ScriptNotConsumed,
    estimate_tokens,
)

__all__ = [
    "Reply",
    "ScriptExhausted",
    "ScriptNotConsumed",
    "ScriptedChatModel",
    "estimate_tokens",
]
