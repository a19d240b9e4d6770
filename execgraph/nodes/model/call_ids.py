"""One id per tool call of a reply, so each call is answered once, with its own result.

A provider (or a model writing its own ids) may give two calls of one reply the same id,
or none. Results, ToolMessages and the transcript are keyed by that id, so the second call
used to shadow the first: the first write ran, but the model was shown the second's result
twice. The reply is kept with distinct ids instead: the first call of an id keeps it, a
later one becomes ``<id>~2``, ``<id>~3`` (a missing id becomes ``<turn>-<index>``), the
same way every time the reply is read, so a replayed turn names its calls as the first
run did, and the conversation the model sees next answers every id its reply carries.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

__all__ = ["distinct_call_ids"]


def distinct_call_ids(ai: AIMessage, turn_id: str) -> AIMessage:
    """``ai`` itself when its tool calls have distinct ids, else a copy whose calls do."""
    ids = [call.get("id") for call in ai.tool_calls]
    if all(ids) and len(set(ids)) == len(ids):
        return ai
    taken = {str(i) for i in ids if i}
    seen: set[str] = set()
    calls = []
    for index, call in enumerate(ai.tool_calls):
        wanted = str(call.get("id") or f"{turn_id}-{index}")
        given, n = wanted, 1
        while given in seen or (given != wanted and given in taken):
            n += 1
            given = f"{wanted}~{n}"
        seen.add(given)
        calls.append({**call, "id": given})
    return ai.model_copy(update={"tool_calls": calls})
