"""What the model is shown of a conversation: the thread's earlier requests in their place,
the current one as the task, and the developer's instructions in the system message
beside the runtime's rules (projected and full context alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.nodes.context.requests import recent_records, request_record
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

CFG = {"configurable": {"thread_id": "chat"}}


@tool_spec(effect="read")
def look(item: str) -> str:
    """Look an item up."""
    return f"{item} is blue"


def _look(call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "look", "args": {"item": "sky"}, "id": call_id}])


def _kinds(messages: list[BaseMessage]) -> list[str]:
    return [f"{m.type}:{str(m.content)[:24]}" for m in messages]


@pytest.mark.parametrize("context", ["projected", "full"])
def test_an_earlier_request_is_shown_in_its_place_and_the_current_one_as_the_task(
    tmp_path: Path, context: str
) -> None:
    model = ScriptedChatModel([_look("l1"), AIMessage("It is blue."), AIMessage("You asked.")])
    app = build_graph(
        "react",
        model=model,
        tools=[look],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        context=context,
    )
    app.invoke({"messages": [HumanMessage("What colour is the sky?")]}, CFG)
    app.invoke({"messages": [HumanMessage("What did I ask?")]}, CFG)
    shown = model.calls[2]
    assert _kinds(shown)[1:] == [
        "human:What colour is the sky?",
        "ai:",
        'tool:<tool_output tool="look"',
        "ai:It is blue.",
        "human:Task: What did I ask?",
        "human:Evidence observed so far",
    ]
    first = model.calls[0]  # a first request: the task first, as always
    assert _kinds(first)[1] == "human:Task: What colour is the"


def test_the_developers_instructions_join_the_runtimes_system_message(tmp_path: Path) -> None:
    model = ScriptedChatModel([AIMessage("Bonjour."), AIMessage("Salut.")])
    app = build_graph(
        "react",
        model=model,
        tools=[look],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        system_prompt="Be brief.",
    )
    ask = [SystemMessage("Answer in French."), HumanMessage("hi")]
    app.invoke({"messages": ask}, CFG)
    app.invoke({"messages": [HumanMessage("again")]}, CFG)
    for call in model.calls:
        [system] = [m for m in call if isinstance(m, SystemMessage)]
        text = str(system.content)
        assert "Instructions from the developer:\nBe brief.\n\nAnswer in French." in text
        assert text.index("Instructions from the developer") < text.index("Rules:")
        assert "untrusted DATA" in text  # the runtime's rules stay


def test_recent_records_count_model_turns_and_keep_the_requests_among_them() -> None:
    turns: list[dict[str, Any]] = [{"id": f"t{i}", "turn": i} for i in range(1, 6)]
    records = [request_record(1, 0, "a"), *turns[:3], request_record(2, 3, "b"), *turns[3:]]
    assert recent_records(records, 2) == records[-3:]  # the request between them stays
    assert recent_records(records, 3) == records[3:]
    assert recent_records(records, 9) == records and recent_records(records, 0) == []
