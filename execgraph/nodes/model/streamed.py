"""Model replies streamed token by token when the caller streams, with strict tool calls.

LangGraph's ``stream_mode="messages"`` (and ``astream_events``) shows a reply's tokens as
they arrive when the chat model streams. A model built from a ``"provider:model"`` string
does not stream a turn that offers tools (``disable_streaming="tool_calling"``, see
:mod:`execgraph.nodes.model.select`), and every execgraph turn offers tools, so its
replies would only ever appear whole. The reason for that setting is the stream's
forgiving parse of tool-call arguments: a truncated ``'{"text": "hello wor'`` reads as a
valid call. :class:`StreamedReplies` streams instead, and parses each call's whole
argument text strictly once the stream ends, so a call whose arguments are not a JSON
object lands in ``invalid_tool_calls`` exactly as an unstreamed reply's does, and the
turn repairs it. Only when a caller streams: a plain ``invoke`` calls the model as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tracers._streaming import _StreamingCallbackHandler

__all__ = ["StreamedReplies", "streaming_model", "strict_reply", "wants_tokens"]


def wants_tokens(config: RunnableConfig | Mapping[str, Any] | None) -> bool:
    """Whether the caller streams a model's tokens (a handler that does is attached): the
    test a chat model applies itself before streaming on ``invoke``."""
    callbacks = (config or {}).get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        handlers = callbacks.handlers
    else:
        handlers = list(callbacks or [])
    return any(isinstance(h, _StreamingCallbackHandler) for h in handlers)


def streaming_model(model: BaseChatModel) -> BaseChatModel:
    """``model`` allowed to stream its tool turns, if only they were disabled (strict
    parsing then does what the setting was for); an explicit ``disable_streaming=True``
    is kept."""
    if model.disable_streaming == "tool_calling":
        return model.model_copy(update={"disable_streaming": False})
    return model


def strict_reply(chunk: AIMessageChunk) -> AIMessage:
    """A streamed reply as one message, each call's arguments parsed as a whole JSON object
    (never the partial parse streaming uses for its chunks)."""
    if not chunk.tool_call_chunks:
        calls, invalid = list(chunk.tool_calls), list(chunk.invalid_tool_calls)
    else:
        calls, invalid = [], []
        for part in chunk.tool_call_chunks:
            raw = part.get("args") or ""
            try:
                args = json.loads(raw) if raw else {}
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append(tool_call(name=part.get("name") or "", args=args, id=part.get("id")))
            else:
                invalid.append(
                    invalid_tool_call(
                        name=part.get("name"),
                        args=raw,
                        id=part.get("id"),
                        error="the arguments are not a JSON object",
                    )
                )
    return AIMessage(
        content=chunk.content,
        additional_kwargs=chunk.additional_kwargs,
        response_metadata=chunk.response_metadata,
        name=chunk.name,
        id=chunk.id,
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=chunk.usage_metadata,
    )


class StreamedReplies(Runnable[Any, AIMessage]):
    """A bound chat model whose ``invoke`` streams the reply and returns it whole.

    A plain ``Runnable``: it opens no callback run of its own, so the model's run (and its
    tokens) is the one the caller's handlers see, as with the model itself.
    """

    def __init__(self, bound: Runnable[Any, BaseMessage]) -> None:
        self.bound = bound

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AIMessage:
        """Stream the reply to ``input``; return it whole, its tool calls parsed strictly."""
        merged: AIMessageChunk | None = None
        for piece in self.bound.stream(input, config, **kwargs):
            if not isinstance(piece, AIMessageChunk):  # a model that could not stream
                return piece if isinstance(piece, AIMessage) else AIMessage(piece.content)
            merged = piece if merged is None else merged + piece
        return AIMessage(content="") if merged is None else strict_reply(merged)
