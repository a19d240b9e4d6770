"""The run as a conversation: the messages a turn adds to state's ``messages`` channel.

A LangGraph user reads a run as ``create_agent``'s: the human request, each model reply
(an ``AIMessage`` with its ``tool_calls``) and one ``ToolMessage`` per call. The executor
answers the calls it ran (:func:`execgraph.nodes.executor.tool_message`); a turn adds the
model's reply and answers what the runtime answered instead of a tool — a control call
(``finish`` rejected, ``ask_user`` answered) or a call that never ran — with the text the
model is shown for it in its next input (:func:`execgraph.nodes.context.projection.transcript`).
A run's end answers every call of its last reply still open (:func:`closing`): an
accepted ``finish``, an ``abort``, a call the stop left unrun. So every call in the
transcript has its answer.

Every answer names its tool (``name``), as a tool's own message does, and carries an
``artifact`` of a ToolResult's shape where a reader looks first: ``tool_name``,
``tool_call_id``, ``outcome`` and ``data`` (the text), plus ``control: True`` for the
runtime's control tools (finish, ask_user, abort, revise_plan, submit_plan), which no
tool runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from execgraph.nodes.deps import CONTROL_TOOLS
from execgraph.nodes.executor import tool_message
from execgraph.state.contracts import RunStatus

__all__ = [
    "CONTROLS",
    "NOT_EXECUTED",
    "ai_message",
    "answer",
    "closing",
    "unanswered",
]

NOT_EXECUTED = "not executed"
"""What the model is shown for a call of its that nothing ran (as the context shows it)."""

CONTROLS = frozenset({*CONTROL_TOOLS, "submit_plan"})
"""The runtime's control tools: the runtime answers their calls, no tool runs."""


def ai_message(ai: AIMessage, run_id: str, turn_id: str) -> AIMessage:
    """The model's reply as the conversation keeps it: the reply itself, with an id.

    A chat model's reply carries its run's id (the id ``stream_mode="messages"`` streamed
    its tokens under, so the stream does not send it twice); a reply without one is given
    the turn's.
    """
    if ai.id:
        return ai
    return ai.model_copy(update={"id": f"ai:{run_id}:{turn_id}"})


def answer(tool_call_id: str, text: str, name: str = "", *, ok: bool | None = None) -> ToolMessage:
    """The runtime's answer to a call of tool ``name`` that no tool ran.

    ``ok`` says whether the call did what it asked (an accepted finish, a plan taken);
    by default every answer but ``not executed`` did. ``status`` and the artifact's
    ``outcome`` follow it.
    """
    done = text != NOT_EXECUTED if ok is None else ok
    artifact = {
        "tool_name": name,
        "tool_call_id": tool_call_id,
        "outcome": "succeeded" if done else "failed",
        "data": text,
        "control": name in CONTROLS,
    }
    return ToolMessage(
        content=text,
        tool_call_id=tool_call_id,
        name=name or None,
        id=f"answer:{tool_call_id}",
        status="success" if done else "error",
        artifact=artifact,
    )


def _note(feedback: Sequence[Mapping[str, Any]], tool_call_id: str) -> str | None:
    for note in reversed(feedback):
        if note.get("tool_call_id") == tool_call_id:
            return str(note["text"])
    return None


def _open_calls(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The calls of the last model reply that no message answers yet (none when a new
    human request follows it: an answer after the request would no longer follow its
    call)."""
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
    return [dict(c) for c in calls if c.get("id") and c["id"] not in answered]


def _result_answers(state: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        r.get("tool_call_id"): r
        for r in (state.get("results") or {}).values()
        if r.get("tool_call_id")
    }


def unanswered(state: Mapping[str, Any], limit: int) -> list[ToolMessage]:
    """Answers for the calls of the last model reply that no message answers yet.

    Each reads as the model's next input shows that call: its result's observation, the
    runtime's note for it (a rejected finish, the user's answer), or ``not executed``.
    """
    open_calls = _open_calls(state.get("messages") or [])
    if not open_calls:
        return []
    results = _result_answers(state)
    feedback = state.get("feedback") or []
    out: list[ToolMessage] = []
    for call in open_calls:
        tool_call_id, name = str(call["id"]), str(call.get("name") or "")
        result = results.get(tool_call_id)
        made = tool_message(result, limit) if result is not None else None
        note = _note(feedback, tool_call_id)
        out.append(made or answer(tool_call_id, note or NOT_EXECUTED, name))
    return out


def closing(
    state: Mapping[str, Any], limit: int, status: RunStatus, reason: str
) -> list[ToolMessage]:
    """Answers, at the run's end, for the calls of its last reply still open.

    A ``finish`` the verifier accepted is answered ``accepted``; any other control call
    with the runtime's note for it, or with how the run ended (an ``abort`` did what it
    asked, a ``finish`` of a run that did not complete did not); a tool call with its
    result, or ``not executed``.
    """
    open_calls = _open_calls(state.get("messages") or [])
    if not open_calls:
        return []
    results = _result_answers(state)
    feedback = state.get("feedback") or []
    ended = f"the run ended {status.value}: {reason}"
    out: list[ToolMessage] = []
    for call in open_calls:
        tool_call_id, name = str(call["id"]), str(call.get("name") or "")
        result = results.get(tool_call_id)
        made = tool_message(result, limit) if result is not None else None
        if made is not None:
            out.append(made)
        elif name == "finish" and status is RunStatus.COMPLETED:
            out.append(answer(tool_call_id, "accepted: the run is COMPLETED", name, ok=True))
        elif name in CONTROLS:
            note = _note(feedback, tool_call_id)
            out.append(answer(tool_call_id, note or ended, name, ok=name == "abort"))
        else:
            out.append(answer(tool_call_id, NOT_EXECUTED, name))
    return out
