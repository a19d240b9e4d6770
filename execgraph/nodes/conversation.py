"""The run as a conversation: the messages a turn adds to state's ``messages`` channel.

A LangGraph user reads a run as ``create_agent``'s: the human request, each model reply
(an ``AIMessage`` with its ``tool_calls``) and one ``ToolMessage`` per call. The executor
answers the calls it ran (:mod:`execgraph.nodes.executor.messages`); a turn adds the
model's reply and answers what the runtime answered instead of a tool — a control call
(``finish`` rejected, ``ask_user`` answered) or a call that never ran — with the text the
model is shown for it in its next input (:func:`execgraph.nodes.context.projection.transcript`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from execgraph.nodes.executor import tool_message

__all__ = [
    "NOT_EXECUTED",
    "ai_message",
    "answer",
    "unanswered",
]

NOT_EXECUTED = "not executed"
"""What the model is shown for a call of its that nothing ran (as the context shows it)."""


def ai_message(ai: AIMessage, run_id: str, turn_id: str) -> AIMessage:
    """The model's reply as the conversation keeps it: the reply itself, with an id.

    A chat model's reply carries its run's id (the id ``stream_mode="messages"`` streamed
    its tokens under, so the stream does not send it twice); a reply without one is given
    the turn's.
    """
    if ai.id:
        return ai
    return ai.model_copy(update={"id": f"ai:{run_id}:{turn_id}"})


def answer(tool_call_id: str, text: str) -> ToolMessage:
    """The runtime's answer to a call no tool ran (``status`` error when it did not run)."""
    status = "error" if text == NOT_EXECUTED else "success"
    return ToolMessage(
        content=text, tool_call_id=tool_call_id, id=f"answer:{tool_call_id}", status=status
    )


def _note(feedback: Sequence[Mapping[str, Any]], tool_call_id: str) -> str | None:
    for note in reversed(feedback):
        if note.get("tool_call_id") == tool_call_id:
            return str(note["text"])
    return None


def unanswered(state: Mapping[str, Any], limit: int) -> list[ToolMessage]:
    """Answers for the calls of the last model reply that no message answers yet.

    Each reads as the model's next input shows that call: its result's observation, the
    runtime's note for it (a rejected finish, the user's answer), or ``not executed``.
    A reply followed by a new human request is left as it is: an answer after the request
    would no longer follow its call.
    """
    messages: Sequence[BaseMessage] = state.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage):
            return []
        if isinstance(message, AIMessage):
            break
    else:
        return []
    calls = messages[index].tool_calls  # type: ignore[attr-defined]
    answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
    open_calls = [c for c in calls if c.get("id") and c["id"] not in answered]
    if not open_calls:
        return []
    results = {
        r.get("tool_call_id"): r
        for r in (state.get("results") or {}).values()
        if r.get("tool_call_id")
    }
    feedback = state.get("feedback") or []
    out: list[ToolMessage] = []
    for call in open_calls:
        tool_call_id = str(call["id"])
        result = results.get(tool_call_id)
        made = tool_message(result, limit) if result is not None else None
        out.append(made or answer(tool_call_id, _note(feedback, tool_call_id) or NOT_EXECUTED))
    return out
