"""The ``messages`` reducer: LangGraph's ``add_messages`` merge by id, in a bounded window.

It is a DeltaChannel's fold, so besides the merge rules it must give the same value
however its writes are batched and whenever a write is folded again (a new process
rebuilding the channel), and must not change what it was given.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from execgraph.state.reducers import (
    MESSAGES_WINDOW,
    PINNED_MESSAGES,
    add_messages_window,
    messages_batch,
)


def _ai(i: int) -> AIMessage:
    return AIMessage("", id=f"ai{i}", tool_calls=[{"name": "t", "args": {}, "id": f"c{i}"}])


def _tool(i: int) -> ToolMessage:
    return ToolMessage("ok", tool_call_id=f"c{i}", id=f"tool{i}")


def test_new_messages_append_and_a_known_id_replaces_in_place() -> None:
    value = add_messages_window([], [HumanMessage("hi", id="h"), _ai(0)])
    value = add_messages_window(value, [_tool(0), HumanMessage("hello", id="h")])
    assert [m.id for m in value] == ["h", "ai0", "tool0"]
    assert value[0].content == "hello"


def test_a_single_message_dicts_and_tuples_are_converted_as_add_messages_does() -> None:
    value = add_messages_window(None, HumanMessage("one", id="1"))
    value = add_messages_window(value, [{"role": "assistant", "content": "two", "id": "2"}])
    value = add_messages_window(value, [("user", "three")])
    assert [type(m).__name__ for m in value] == ["HumanMessage", "AIMessage", "HumanMessage"]
    assert [m.content for m in value] == ["one", "two", "three"]


def test_a_value_read_back_as_message_dicts_merges_as_messages() -> None:
    # LangGraph Server hands a snapshot's messages back as dicts ("re-run from here")
    stored = [
        {"type": "human", "content": "hi", "id": "h"},
        {"type": "ai", "content": "", "id": "ai0", "tool_calls": _ai(0).tool_calls},
    ]
    value = add_messages_window(stored, [_tool(0)])  # type: ignore[arg-type]
    assert [(type(m).__name__, m.id) for m in value] == [
        ("HumanMessage", "h"),
        ("AIMessage", "ai0"),
        ("ToolMessage", "tool0"),
    ]


def test_remove_message_deletes_its_id_and_remove_all_clears() -> None:
    value = add_messages_window([], [HumanMessage("a", id="a"), HumanMessage("b", id="b")])
    value = add_messages_window(value, [RemoveMessage(id="a"), RemoveMessage(id="gone")])
    assert [m.id for m in value] == ["b"]
    value = add_messages_window(value, [RemoveMessage(id=REMOVE_ALL_MESSAGES), _ai(1)])
    assert [m.id for m in value] == ["ai1"]


def test_the_window_keeps_the_newest_and_never_starts_with_an_orphan_answer() -> None:
    value: list = []
    for i in range(MESSAGES_WINDOW):
        value = add_messages_window(value, [_ai(i), _tool(i)])
    assert len(value) == MESSAGES_WINDOW
    assert value[0].id == f"ai{MESSAGES_WINDOW // 2}"
    # One more message cuts the window inside a turn: its tool answer goes with its call.
    value = add_messages_window(value, [HumanMessage("next", id="h")])
    assert isinstance(value[0], AIMessage) and len(value) == MESSAGES_WINDOW - 1
    assert len(add_messages_window([], [_ai(i) for i in range(99)], window=None)) == 99


def test_the_window_keeps_the_users_request_and_the_developers_instructions() -> None:
    value = add_messages_window([], [SystemMessage("be brief", id="s"), HumanMessage("q", id="h")])
    for i in range(MESSAGES_WINDOW):
        value = add_messages_window(value, [_ai(i), _tool(i)])
    assert len(value) == MESSAGES_WINDOW
    assert [m.id for m in value[:3]] == ["s", "h", f"ai{MESSAGES_WINDOW // 2 + 1}"]
    assert value[-1].id == f"tool{MESSAGES_WINDOW - 1}"
    humans = [HumanMessage(f"q{i}", id=f"h{i}") for i in range(PINNED_MESSAGES + 2)]
    for i, human in enumerate(humans):  # only the newest requests are kept however old
        turns = [m for j in range(8) for m in (_ai(100 * i + j), _tool(100 * i + j))]
        value = add_messages_window(value, [human, *turns])
    kept = [m.id for m in value if isinstance(m, HumanMessage)]
    assert kept == [h.id for h in humans[-PINNED_MESSAGES:]] and value[0].id == "s"
    first = next(m for m in value if not isinstance(m, SystemMessage | HumanMessage))
    assert len(value) <= MESSAGES_WINDOW and not isinstance(first, ToolMessage)


def test_a_message_without_an_id_gets_one_that_a_replay_reproduces() -> None:
    base = [HumanMessage("hi", id="h")]
    once = add_messages_window(base, [HumanMessage("again"), HumanMessage("again")])
    twice = add_messages_window(base, [HumanMessage("again"), HumanMessage("again")])
    assert [m.id for m in once] == [m.id for m in twice]
    assert len({m.id for m in once}) == 3  # the same text twice is two messages
    later = add_messages_window(once, [HumanMessage("again")])
    assert len(later) == 4  # the same text in a later write is a new message too


def test_the_inputs_are_not_changed() -> None:
    given = HumanMessage("no id")
    left = [HumanMessage("a", id="a")]
    add_messages_window(left, [given, HumanMessage("b", id="a")])
    assert given.id is None and left[0].content == "a" and len(left) == 1


@pytest.mark.parametrize("cut", range(6))
def test_batching_the_writes_differently_gives_the_same_value(cut: int) -> None:
    writes = [
        [HumanMessage("q", id="h")],
        [_ai(0)],
        [_tool(0), _ai(1)],
        [RemoveMessage(id="ai0")],
        [("user", "untagged")],
        [_tool(1)],
    ]
    whole = messages_batch([], writes)
    split = messages_batch(messages_batch([], writes[:cut]), writes[cut:])
    assert whole == split
