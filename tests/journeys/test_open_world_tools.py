"""Tools that reach outside systems, as an MCP server's ``openWorldHint`` says: egress.

A tool annotated ``openWorldHint: true`` (the web, a public profile, other people) is
``open_world``, and the policy treats its calls as egress: a write to an outside system
asks a person first (a write to the user's own drafts does not), and a read's arguments
are checked as leaving (a link copied from a page the model read is not fetched without
a person, with ``copied_text`` on). The hint only narrows: it holds for an untrusted
server and over the application's own declaration, and ``openWorldHint: false`` never
clears an ``open_world=True`` the application declares. Driven with ``ChatOpenAI``
against the scripted server and a real MCP server over stdio.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.types import Command

from execgraph import build_graph
from execgraph.tools.mcp import mcp_tools
from execgraph.tools.policy import PolicyEngine, PolicyRule
from tests.journeys.everyday import cfg
from tests.journeys.outside_mcp_server import LEAK
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(180)

SERVER = Path(__file__).with_name("outside_mcp_server.py")


def _server(log_dir: Path) -> dict[str, Any]:
    return {"transport": "stdio", "command": sys.executable, "args": [str(SERVER), str(log_dir)]}


def _calls(log_dir: Path) -> list[str]:
    log = log_dir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_an_open_world_write_from_my_trusted_server_asks_me_first(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    logs = home.parent
    tools = mcp_tools({"outside": _server(logs)}, trusted={"outside"})
    shape = {t.name: (t.effect, t.open_world) for t in tools}
    assert shape == {
        "fetch_page": ("read", True),
        "read_draft": ("read", False),
        "post_status": ("write", True),
        "save_draft": ("write", False),
    }
    openai_server.add(
        tool_calls(tool_call("save_draft", {"name": "hello", "text": "Hello, world"})),
        tool_calls(tool_call("post_status", {"text": "Hello, world"})),
        text("Saved and posted."),
    )
    app = build_graph("react", model=chat_model(), tools=tools)
    ask = {"messages": [HumanMessage("Save a draft saying hello, then post it.")]}
    out = app.invoke(ask, cfg("post"))
    [asked] = out["__interrupt__"]  # the draft is saved; the public post waits for me
    assert (asked.value["tool"], asked.value["effect"]) == ("post_status", "write")
    assert "open-world" in asked.value["reason"]
    assert _calls(logs) == ["save hello"]

    out = app.invoke(Command(resume={asked.id: {"action": "approve"}}), cfg("post"))
    assert out["status"] == "COMPLETED", out.get("error")
    assert _calls(logs) == ["save hello", "post Hello, world"]
    assert out["messages"][-1].content == "Saved and posted."


def test_an_open_world_hint_narrows_my_declaration_and_never_widens_it(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    logs = home.parent
    mine = {
        "fetch_page": {"effect": "read"},
        "post_status": {"effect": "write"},  # the server says it reaches outside: it does
        "save_draft": {"effect": "write", "open_world": True},  # its "false" cannot clear mine
        "read_draft": {"effect": "read"},
    }
    tools = mcp_tools({"outside": _server(logs)}, declare=mine)  # a server I do not trust
    shape = {t.name: (t.effect, t.open_world) for t in tools}
    assert shape == {
        "fetch_page": ("read", True),
        "read_draft": ("read", False),
        "post_status": ("write", True),
        "save_draft": ("write", True),
    }
    openai_server.add(
        tool_calls(tool_call("post_status", {"text": "Hello"})),
        text("Asked first."),
    )
    deny_outside = PolicyRule.parse({"open_world": True, "effect": "read", "decision": "deny"})
    assert [t.name for t in tools if deny_outside.matches(t, [], "u")] == ["fetch_page"]
    app = build_graph("react", model=chat_model(), tools=tools)
    out = app.invoke({"messages": [HumanMessage("Post hello.")]}, cfg("declared"))
    [asked] = out["__interrupt__"]
    assert asked.value["tool"] == "post_status" and _calls(logs) == []


def test_an_open_world_read_is_egress_for_a_link_copied_from_a_page(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    """A page the model read names a link; reading my own draft by that text is fine, but
    fetching the link sends it out: with ``copied_text="ask"`` a person decides."""
    logs = home.parent
    tools = mcp_tools({"outside": _server(logs)}, trusted={"outside"})
    openai_server.add(
        tool_calls(tool_call("read_draft", {"name": "intro"})),
        tool_calls(tool_call("read_draft", {"name": LEAK})),  # a closed read: not egress
        tool_calls(tool_call("fetch_page", {"url": LEAK})),  # the link leaves: egress
        text("I did not open the link."),
    )
    app = build_graph(
        "react", model=chat_model(), tools=tools, policy=PolicyEngine(copied_text="ask")
    )
    out = app.invoke({"messages": [HumanMessage("Read my intro draft.")]}, cfg("egress"))
    [asked] = out["__interrupt__"]
    assert (asked.value["tool"], asked.value["arguments"]["url"]) == ("fetch_page", LEAK)
    assert _calls(logs) == ["read intro", f"read {LEAK}"]

    out = app.invoke(Command(resume={asked.id: {"action": "reject"}}), cfg("egress"))
    assert out["messages"][-1].content == "I did not open the link."
    assert _calls(logs) == ["read intro", f"read {LEAK}"]  # never fetched
    assert not openai_server.unexpected
