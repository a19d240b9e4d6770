"""LangGraph's tool idioms work as under ``ToolNode``.

``InjectedToolCallId`` and ``ToolRuntime.tool_call_id`` carry the model's id for the call
(the id the ``ToolMessage`` answers), as ``create_agent`` gives them; a tool returning
``Command(update={"messages": [ToolMessage(...)]})`` answers its call with that message;
a ``Command`` that would update other state is the tool's bug, raised from ``invoke`` with
a clear message (``create_agent`` raises too), never told to the model; while a tool's own
``interrupt()`` waits, the run reads ``WAITING``; ``ToolRuntime.context`` is the run's
context, a dict made the graph's ``context_schema`` as ``create_agent`` makes it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_openai import ChatOpenAI
from langgraph.types import Command, interrupt

from execgraph import build_graph
from execgraph.state.errors import ToolTypeError
from tests.journeys.everyday import agent, cfg
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(120)

SEEN: list[str] = []


@tool
def cite(source: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Cite a source."""
    SEEN.append(tool_call_id)
    return f"[{source}]"


@tool
def lookup(term: str, runtime: ToolRuntime) -> Command:  # type: ignore[type-arg]
    """Look a term up; answers with a ToolMessage inside a Command."""
    SEEN.append(str(runtime.tool_call_id))
    reply = ToolMessage(f"{term}: found", tool_call_id=str(runtime.tool_call_id))
    return Command(update={"messages": [reply]})


@tool
def remember(note: str) -> Command:  # type: ignore[type-arg]
    """Write a note into the agent's state."""
    return Command(update={"notes": [note]})


for _t in (cite, lookup, remember):
    _t.metadata = {"effect": "read"}

SCRIPT = (
    tool_calls(
        tool_call("cite", {"source": "kb-7"}, id="call_cite"),
        tool_call("lookup", {"term": "rag"}, id="call_lookup"),
    ),
    text("Cited and looked up."),
)
ASK = {"messages": [HumanMessage("Cite kb-7 and look up rag.")]}


def test_the_models_call_id_is_injected_and_a_command_answers_as_under_toolnode(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    SEEN.clear()
    openai_server.add(*SCRIPT)
    out = build_graph("react", model=chat_model(), tools=[cite, lookup]).invoke(ASK, cfg("ids"))
    assert out["status"] == "COMPLETED", out.get("error")
    assert sorted(SEEN) == ["call_cite", "call_lookup"]
    answers = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert set(answers) == {"call_cite", "call_lookup"}
    assert "rag: found" in str(answers["call_lookup"].content)
    results = {r["tool_name"]: r for r in out["results"].values()}
    assert results["lookup"]["data"] == "rag: found"

    SEEN.clear()  # create_agent gives the tools the same ids
    openai_server.add(*SCRIPT)
    done = agent(chat_model(), [cite, lookup]).invoke(ASK, cfg("agent"))
    assert sorted(SEEN) == ["call_cite", "call_lookup"]
    assert done["messages"][-1].content == "Cited and looked up."
    assert not openai_server.unexpected


def test_a_command_updating_other_state_is_raised_to_the_developer_as_with_create_agent(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(tool_calls(tool_call("remember", {"note": "x"}, id="call_note")))
    app = build_graph("react", model=chat_model(), tools=[remember])
    answer_only = re.escape('only Command(update={"messages": [ToolMessage(...)]})')
    with pytest.raises(ToolTypeError, match=answer_only):
        app.invoke({"messages": [HumanMessage("Remember x.")]}, cfg("note"))
    state = app.get_state(cfg("note")).values
    assert state["status"] == "FAILED" and "tool bug" in state["error"]["message"]
    assert len(openai_server.requests) == 1  # the model is not asked about it again

    openai_server.add(tool_calls(tool_call("remember", {"note": "x"}, id="call_note")))
    with pytest.raises(ValueError, match="ToolMessage"):  # create_agent: a bug, raised too
        agent(chat_model(), [remember]).invoke(
            {"messages": [HumanMessage("Remember x.")]}, cfg("agent-note")
        )
    assert len(openai_server.requests) == 2
    assert not openai_server.unexpected


@tool
def publish(doc: str) -> str:
    """Publish a document once the editor agrees."""
    return f"{doc}: {interrupt({'question': f'Publish {doc}?'})}"


publish.metadata = {"effect": "write"}


def test_a_run_whose_tool_asks_a_person_is_waiting(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(tool_calls(tool_call("publish", {"doc": "q3.md"})), text("Published."))
    app = build_graph("react", model=chat_model(), tools=[publish])
    out = app.invoke({"messages": [HumanMessage("Publish q3.md.")]}, cfg("ask"))
    [asked] = out["__interrupt__"]
    assert asked.value == {"question": "Publish q3.md?"}
    assert out["status"] == "WAITING"
    assert app.get_state(cfg("ask")).values["status"] == "WAITING"

    async def read() -> str:
        return str((await app.aget_state(cfg("ask"))).values["status"])

    assert asyncio.run(read()) == "WAITING"
    out = app.invoke(Command(resume="yes"), cfg("ask"))
    assert out["status"] == "COMPLETED" and out["results"]["t1.c0"]["data"] == "q3.md: yes"
    assert not openai_server.unexpected


@dataclass
class Caller:
    user_id: str


@tool
def whoami(runtime: ToolRuntime[Caller]) -> str:
    """Who is asking."""
    assert isinstance(runtime.context, Caller)
    return f"user {runtime.context.user_id}"


whoami.metadata = {"effect": "read"}


def test_a_tool_reads_the_runs_context_as_with_create_agent(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    ask = {"messages": [HumanMessage("Who am I?")]}
    app = build_graph("react", model=chat_model(), tools=[whoami], context_schema=Caller)
    assert app.get_context_jsonschema()["properties"] == {  # what Studio's form shows
        "user_id": {"title": "User Id", "type": "string"}
    }
    theirs = agent(chat_model(), [whoami], context_schema=Caller)
    for graph, context in ((app, {"user_id": "ann"}), (theirs, {"user_id": "ann"})):
        openai_server.add(tool_calls(tool_call("whoami", {})), text("You are ann."))
        out = graph.invoke(ask, cfg(f"who-{id(graph)}"), context=context)  # a dict, as the SDK
        [answer] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert "user ann" in str(answer.content)
    assert not openai_server.unexpected
