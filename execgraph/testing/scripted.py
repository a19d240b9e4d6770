"""A chat model that replays a script, for tests and trajectory replay.

The decide node only needs a ``BaseChatModel`` with ``bind_tools``; a scripted model makes
every architecture testable without a network and makes a recorded run replayable. It is a
fake *model*, not a mock: it goes through LangChain's real invoke/callback/binding path, so
what the runtime sees is exactly what a provider integration would hand it.

Why it is strict: a script that runs out must stop the test at the call that was not
expected (:class:`ScriptExhausted`), never loop or return something plausible, or a runaway
loop would look like a passing run.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    message_chunk_to_message,
    messages_from_dict,
)
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from execgraph.state.errors import ScriptedReplyError
from execgraph.testing.binding import ToolBindingChatModel

__all__ = [
    "Reply",
    "ScriptExhausted",
    "ScriptNotConsumed",
    "ScriptedChatModel",
    "estimate_tokens",
]

Reply = AIMessage | Mapping[str, Any] | str | Callable[[list[BaseMessage]], Any]
"""One scripted turn: a message, a dict (AIMessage fields or ``message_to_dict`` output),
plain text, or a callable ``(messages) -> AIMessage | dict | str`` for input-dependent replies.
"""

_PREVIEW_CHARS = 160


class ScriptExhausted(AssertionError):
    """The model was called more times than replies were scripted."""


class ScriptNotConsumed(AssertionError):
    """A test expected the whole script to be used, but replies are left over."""


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate (about four characters per token).

    Budgets must be countable without a tokenizer, and the same input must always cost the
    same, so replayed runs hit budget limits at the same turn as the original.
    """
    return (len(text) + 3) // 4


def _message_text(message: BaseMessage) -> str:
    """Everything in a message that a provider would bill: text plus tool calls."""
    content = (
        message.content
        if isinstance(message.content, str)
        else json.dumps(message.content, sort_keys=True, default=str)
    )
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        calls = [*message.tool_calls, *message.invalid_tool_calls]
        content += json.dumps(calls, sort_keys=True, default=str)
    return content


def _fill_call_ids(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Give every tool call an id: the executor keys idempotency and results on it."""
    filled = []
    for call in calls:
        item = dict(call)
        if not item.get("id"):
            item["id"] = f"call_{uuid.uuid4().hex[:24]}"
        filled.append(item)
    return filled


def _to_ai_message(reply: Any, *, where: str) -> AIMessage:
    """Normalize one reply to an AIMessage, or fail naming the bad script entry."""
    if isinstance(reply, AIMessageChunk):
        reply = message_chunk_to_message(reply)
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, str):
        return AIMessage(content=reply)
    if isinstance(reply, BaseMessage):
        raise ScriptedReplyError(f"{where}: expected an AI message, got a {reply.type!r} message")
    if isinstance(reply, Mapping):
        if "data" in reply:  # messages_to_dict() form
            (message,) = messages_from_dict([dict(reply)])
            return _to_ai_message(message, where=where)
        fields = dict(reply)
        if fields.pop("type", "ai") != "ai":
            raise ScriptedReplyError(f"{where}: expected an AI message, got {reply['type']!r}")
        fields.setdefault("content", "")
        if "tool_calls" in fields:
            fields["tool_calls"] = _fill_call_ids(fields["tool_calls"])
        if "invalid_tool_calls" in fields:
            fields["invalid_tool_calls"] = [
                {"name": None, "args": None, "error": None, **call}
                for call in _fill_call_ids(fields["invalid_tool_calls"])
            ]
        return AIMessage(**fields)
    raise ScriptedReplyError(
        f"{where}: a scripted reply must be an AIMessage, dict, str or callable, "
        f"got {type(reply).__name__}"
    )


def _preview(messages: Sequence[BaseMessage]) -> str:
    """The last human/tool message, shortened, so an exhaustion error shows where it was."""
    for message in reversed(messages):
        if message.type in ("human", "tool"):
            text = message.content if isinstance(message.content, str) else str(message.content)
            if len(text) > _PREVIEW_CHARS:
                text = text[:_PREVIEW_CHARS] + "…"
            return f"{message.type}: {text!r}"
    return "(no human or tool message)"


def _tool_names(tools: Sequence[Any] | None) -> tuple[str, ...]:
    """Names of the tools offered on one call, whatever format they were bound in."""
    names = []
    for tool in tools or ():
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            names.append(str(name))
        else:
            names.append(str(getattr(tool, "name", tool)))
    return tuple(names)


class ScriptedChatModel(ToolBindingChatModel):
    """Replays scripted AI messages in order; fails loudly on one call too many.

    Each call returns a fresh copy of the next reply with a unique id, usage metadata (a
    deterministic estimate unless the reply carries recorded usage) and response metadata.
    The cursor is shared by every binding of the model (``bind_tools`` per turn does not
    restart the script) and is safe to advance from parallel branches.

    Example:
        >>> model = ScriptedChatModel([AIMessage("hi")])
        >>> model.invoke("hello").content
        'hi'

    Attributes:
        calls: the input messages of every call, in call order (an extra, failing call is
            recorded too, so its input can be inspected); the last ``keep_calls`` only
            when that is set.
        tools_offered: for each call, the names of the tools bound to it.
        tools_bound: for each call, the tools bound to it as they were bound (the schemas
            ``bind_tools`` made).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Any] = Field(default_factory=list)
    """The script, normalized at construction (callables stay callables)."""
    model_name: str = "scripted"
    cache: bool | None = False  # a cache hit would silently skip a scripted turn
    keep_calls: int | None = None
    """How many recent calls' inputs :attr:`calls` keeps (None: all). A long replay or a
    benchmark keeps a few, so the model's own record does not grow with the run."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _cursor: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _tools_bound: list[tuple[Any, ...]] = PrivateAttr(default_factory=list)

    def __init__(self, replies: Iterable[Reply] = (), /, **kwargs: Any) -> None:
        """Build a model from replies; see :data:`Reply` for the accepted forms."""
        data: dict[str, Any] = dict(kwargs)
        data["replies"] = [
            reply if callable(reply) else _to_ai_message(reply, where=f"reply {index}")
            for index, reply in enumerate(data.get("replies", replies))
        ]
        super().__init__(**data)

    def __repr_args__(self) -> Any:
        # LangChain reprs a model per call for its callbacks; a repr that spelled out the
        # whole script would cost time and memory in proportion to the script's length.
        for name, value in super().__repr_args__():
            yield (name, f"<{len(value)} replies>") if name == "replies" else (name, value)

    @classmethod
    def from_messages(
        cls, messages: Iterable[Mapping[str, Any] | BaseMessage], **kwargs: Any
    ) -> ScriptedChatModel:
        """Replay a recorded trajectory.

        Args:
            messages: serialized (``messages_to_dict``) or live messages, e.g. a whole
                transcript; only the AI messages become replies, in order.
            **kwargs: further model fields (``model_name``).
        """
        replies: list[AIMessage] = []
        for message in messages:
            if isinstance(message, Mapping) and "data" in message:
                (message,) = messages_from_dict([dict(message)])
            kind = message.get("type", "ai") if isinstance(message, Mapping) else message.type
            if kind in ("ai", "AIMessageChunk"):
                replies.append(_to_ai_message(message, where=f"message {len(replies)}"))
        return cls(replies, **kwargs)

    @classmethod
    def from_events(cls, events: Iterable[Any], **kwargs: Any) -> ScriptedChatModel:
        """Replay the model turns of an event log.

        Each ``model.called`` event whose payload holds ``"message"`` (a ``message_to_dict``
        of the AIMessage the model returned) becomes one reply. Events are taken in the order
        given; a re-emitted event (same ``event_id``) is counted once, like the store does.

        Args:
            events: ``state.events.Event`` objects or their ``model_dump()`` dicts.
            **kwargs: further model fields.
        """
        seen: set[str] = set()
        messages: list[Mapping[str, Any]] = []
        for event in events:
            data = event if isinstance(event, Mapping) else event.model_dump(mode="json")
            if str(data.get("type")) != "model.called":
                continue
            event_id = data.get("event_id")
            if event_id is not None:
                if event_id in seen:
                    continue
                seen.add(event_id)
            message = (data.get("payload") or {}).get("message")
            if message is not None:
                messages.append(message)
        return cls.from_messages(messages, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "replies": len(self.replies)}

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """Input messages of every call so far (a copy)."""
        with self._lock:
            return [list(call) for call in self._calls]

    @property
    def tools_offered(self) -> list[tuple[str, ...]]:
        """Tool names bound on every call so far, aligned with :attr:`calls`."""
        return [_tool_names(tools) for tools in self.tools_bound]

    @property
    def tools_bound(self) -> list[tuple[Any, ...]]:
        """The tools bound on every call so far, as bound, aligned with :attr:`calls`."""
        with self._lock:
            return list(self._tools_bound)

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used yet."""
        with self._lock:
            return max(len(self.replies) - self._cursor, 0)

    def assert_consumed(self) -> None:
        """Raise :class:`ScriptNotConsumed` unless every scripted reply was used."""
        left = self.remaining
        if left:
            raise ScriptNotConsumed(
                f"ScriptedChatModel: {left} of {len(self.replies)} scripted replies were "
                "never requested; the run stopped earlier than the script expected"
            )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools")
        with self._lock:
            index = self._cursor
            self._cursor += 1
            self._calls.append(list(messages))
            self._tools_bound.append(tuple(tools or ()))
            if self.keep_calls is not None:
                del self._calls[: -self.keep_calls or len(self._calls)]
                del self._tools_bound[: -self.keep_calls or len(self._tools_bound)]
        if index >= len(self.replies):
            raise ScriptExhausted(
                f"ScriptedChatModel got call #{index + 1} but only {len(self.replies)} "
                f"replies were scripted. Last input: {_preview(messages)}"
            )
        reply = self.replies[index]
        if callable(reply):
            reply = _to_ai_message(reply(list(messages)), where=f"reply {index} (callable)")
        message = self._stamp(reply, index, messages, tools)
        return ChatResult(
            generations=[ChatGeneration(message=message)],
            llm_output={"model_name": self.model_name},
        )

    def _stamp(
        self,
        reply: AIMessage,
        index: int,
        messages: Sequence[BaseMessage],
        tools: Sequence[Any] | None,
    ) -> AIMessage:
        """A fresh copy of ``reply`` with a unique id, usage and response metadata."""
        message = reply.model_copy(deep=True)
        message.id = f"scripted-{uuid.uuid4().hex}"
        message.tool_calls = [
            tool_call(
                name=call["name"],
                args=call["args"],
                id=call.get("id") or f"call_{uuid.uuid4().hex[:24]}",
            )
            for call in message.tool_calls
        ]
        if message.usage_metadata is None:
            prompt = "".join(_message_text(m) for m in messages)
            prompt += json.dumps(list(tools or ()), sort_keys=True, default=str)
            input_tokens = estimate_tokens(prompt) + 3 * len(messages)
            output_tokens = estimate_tokens(_message_text(message))
            message.usage_metadata = {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            }
        finish = "tool_calls" if message.tool_calls or message.invalid_tool_calls else "stop"
        message.response_metadata = {
            "model_name": self.model_name,
            "model_provider": "scripted",
            "finish_reason": finish,
            **message.response_metadata,
            "script_index": index,
        }
        return message
