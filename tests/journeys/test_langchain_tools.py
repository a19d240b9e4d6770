"""A LangGraph user brings the LangChain tools they already have.

``ChatOpenAI`` against the scripted server, ordinary ``@tool``s and an MCP server's tools,
the embedded default store under a fresh home, the run's callbacks in its config. What
the user should find: an undeclared ``send_email`` is not sent without a person; a read
declared in the tool's metadata just runs; ``InjectedToolCallId`` is hidden from the
model and filled; a tool's ``interrupt()`` pauses the run and ``get_stream_writer()``
streams; every tool run reaches the callbacks; an MCP tool runs; a
``content_and_artifact`` tool's artifact reaches the application and not the model; a
``return_direct`` tool's output ends the run. Where ``create_agent`` does the same, it runs
beside on the same server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_openai import ChatOpenAI
from langgraph.config import get_stream_writer
from langgraph.types import Command, interrupt

from execgraph import build_graph
from execgraph.tools.mcp import mcp_tools
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(180)

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


class ToolRuns(BaseCallbackHandler):
    """What a tracer would be told about tool runs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self._names: dict[UUID, str] = {}

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kw: Any
    ) -> None:
        self._names[run_id] = serialized["name"]
        self.events.append(("start", serialized["name"]))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append(("end", self._names[run_id]))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.events.append((type(error).__name__, self._names[run_id]))


def test_my_langchain_tools_run_as_declared_and_ask_when_undeclared(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    sent: list[str] = []
    published: list[tuple[str, str]] = []

    @tool
    def search(query: str) -> str:
        """Search the knowledge base."""
        return f"3 results for {query}"

    search.metadata = {"effect": "read"}

    @tool
    def cite(source: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Cite a source."""
        return f"[{source}] (call {tool_call_id})"

    cite.metadata = {"effect": "read"}

    @tool
    def publish(doc: str) -> str:
        """Publish a document once the editor agrees."""
        get_stream_writer()({"publishing": doc})
        verdict = interrupt({"question": f"Publish {doc}?"})
        published.append((doc, verdict))
        return f"{doc}: {verdict}"

    publish.metadata = {"effect": "write"}

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    openai_server.add(
        tool_calls(tool_call("search", {"query": "q3 revenue"})),
        tool_calls(tool_call("cite", {"source": "kb-7"}, id="call_cite")),
        tool_calls(tool_call("publish", {"doc": "summary.md"})),
        tool_calls(tool_call("send_email", {"to": "board@corp.test", "body": "done"})),
        tool_calls(tool_call("finish", {"output": "summary published, done"})),
    )
    app = build_graph(
        "react", model=chat_model(), tools=[search, cite, publish, send_email]
    )  # the embedded default store, under $EXECGRAPH_HOME
    runs = ToolRuns()
    cfg: dict[str, Any] = {"configurable": {"thread_id": "journey"}, "callbacks": [runs]}
    task = {
        "goal": "publish the Q3 summary",
        "success_checks": [{"kind": "output_contains", "value": "done"}],
    }

    custom = [
        chunk
        for mode, chunk in app.stream({"task": task}, cfg, stream_mode=["custom", "updates"])
        if mode == "custom"
    ]
    mine = [c for c in custom if "kind" not in c]  # beside the runtime's own live events
    assert mine == [{"publishing": "summary.md"}]  # the tool's stream writer
    assert {"run.admitted", "tool.started"} <= {c["kind"] for c in custom if "kind" in c}
    [asked] = app.get_state(cfg).interrupts
    assert asked.value == {"question": "Publish summary.md?"} and published == []

    out = app.invoke(Command(resume="approved by the editor"), cfg)
    assert published == [("summary.md", "approved by the editor")]
    [approval] = out["__interrupt__"]  # send_email declared nothing: a person is asked
    assert (approval.value["tool"], approval.value["effect"]) == ("send_email", "irreversible")
    assert sent == []

    out = app.invoke(Command(resume={approval.id: {"action": "reject", "reason": "no"}}), cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert sent == []
    results = {r["tool_name"]: r for r in out["results"].values()}
    assert results["search"]["data"] == "3 results for q3 revenue"
    assert results["cite"]["data"] == "[kb-7] (call call_cite)"  # the model's id, as ToolNode
    assert results["send_email"]["status"] != "OK"

    offered = {
        t["function"]["name"]: t["function"] for t in openai_server.requests[0].body["tools"]
    }
    assert set(offered["cite"]["parameters"]["properties"]) == {"source"}  # no tool_call_id
    assert len(openai_server.requests) == 5 and openai_server.unexpected == []
    assert runs.events == [
        ("start", "search"),
        ("end", "search"),
        ("start", "cite"),
        ("end", "cite"),
        ("start", "publish"),
        ("GraphInterrupt", "publish"),  # paused ...
        ("start", "publish"),  # ... and run again with the editor's answer
        ("end", "publish"),
    ]


@tool(response_format="content_and_artifact")
def find_notes(query: str) -> tuple[str, dict[str, Any]]:
    """Find notes matching a query."""
    return f"2 notes match {query}", {"ids": [7, 9], "scores": [0.9, 0.4]}


find_notes.metadata = {"effect": "read"}


def test_a_content_and_artifact_tool_gives_the_model_its_content_as_with_create_agent(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    ask = {"messages": [HumanMessage("Find my Q3 notes.")]}
    for _ in range(2):
        openai_server.add(tool_calls(tool_call("find_notes", {"query": "q3"})), text("Found 2."))
    out = build_graph("react", model=chat_model(), tools=[find_notes]).invoke(
        ask, {"configurable": {"thread_id": "notes"}}
    )
    ours = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    theirs = create_agent(chat_model(), [find_notes]).invoke(ask)["messages"]
    [their] = [m for m in theirs if isinstance(m, ToolMessage)]
    [our] = ours
    assert out["status"] == "COMPLETED" and out["output"] == "Found 2."
    # the application gets the artifact: create_agent's as the message's artifact, ours in
    # the call's result (the message's artifact is the result), as JSON data
    assert their.artifact == {"ids": [7, 9], "scores": [0.9, 0.4]}
    assert our.artifact["artifact"] == their.artifact
    [result] = out["results"].values()
    assert result["artifact"] == their.artifact and result["data"] == "2 notes match q3"
    # the model reads the content alone, in both
    for request in (openai_server.requests[1], openai_server.requests[3]):
        sent = json.dumps(request.body["messages"])
        assert "2 notes match q3" in sent and "scores" not in sent
    assert not openai_server.unexpected


@tool(return_direct=True)
def order_status(order: str) -> str:
    """The shipping status of an order."""
    return f"order {order}: shipped"


order_status.metadata = {"effect": "read"}


def test_a_return_direct_tools_output_ends_the_run_as_with_create_agent(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    ask = {"messages": [HumanMessage("Where is order A1?")]}
    for _ in range(2):  # each asks the model once: its tool's output is the answer
        openai_server.add(tool_calls(tool_call("order_status", {"order": "A1"})))
    out = build_graph("react", model=chat_model(), tools=[order_status]).invoke(
        ask, {"configurable": {"thread_id": "order"}}
    )
    theirs = create_agent(chat_model(), [order_status]).invoke(ask)["messages"]
    assert out["status"] == "COMPLETED" and out["output"] == theirs[-1].content
    assert isinstance(out["messages"][-1], ToolMessage) and isinstance(theirs[-1], ToolMessage)
    assert theirs[-1].content == "order A1: shipped"
    assert len(openai_server.requests) == 2 and not openai_server.unexpected


def test_an_mcp_servers_tools_in_my_graph(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    notes = home.parent / "notes"
    notes.mkdir()
    server = {"transport": "stdio", "command": sys.executable, "args": [str(SERVER), str(notes)]}
    tools = mcp_tools({"notes": server}, trusted={"notes"})  # my own server
    openai_server.add(
        tool_calls(tool_call("put_note", {"name": "todo.txt", "text": "ship it"})),
        tool_calls(tool_call("read_note", {"name": "todo.txt"})),
        tool_calls(tool_call("finish", {"output": "the note says ship it"})),
    )
    app = build_graph("react", model=chat_model(), tools=tools)
    task = {
        "goal": "leave a note",
        "success_checks": [{"kind": "output_contains", "value": "ship it"}],
    }
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "mcp"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert (notes / "todo.txt").read_text() == "ship it"
    results = {r["tool_name"]: r for r in out["results"].values()}
    assert results["read_note"]["data"] == "ship it"
    offered = {t["function"]["name"] for t in openai_server.requests[0].body["tools"]}
    assert {"read_note", "put_note", "delete_note", "touch"} <= offered
