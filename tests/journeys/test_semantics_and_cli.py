"""A LangGraph user's expectations, kept or refused clearly: the thread id, tool names,
hybrid's phases within the budget the other graphs meet, time travel, and the CLI seeing
the runs started from Python.

Each journey uses ``ChatOpenAI`` against the scripted OpenAI-compatible server, ordinary
LangChain ``@tool``s and the embedded default store under a fresh ``$EXECGRAPH_HOME``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.types import Command

from execgraph import build_graph
from execgraph.state.errors import ToolDeclarationError, UsageError
from tests.support.cli_helpers import cli
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls


@tool
def search(query: str) -> str:
    """Search the team wiki."""
    return f"wiki: {query} is owned by the data team"


@tool
def post(message: str) -> str:
    """Post a message to the team channel."""
    return f"posted: {message}"


search.metadata = {"effect": "read"}  # declared, as a user declares a LangChain tool
post.metadata = {"effect": "write"}


TASK = {
    "goal": "Find out who owns the billing service.",
    "success_checks": [{"kind": "tool_succeeded", "target": "search"}],
    "budgets": {"model_calls": 2, "tool_calls": 2},
}


def _finish(text: str) -> Any:
    return tool_calls(tool_call("finish", {"output": text}))


def test_a_missing_thread_id_says_what_to_pass(
    home: Path, chat_model: Callable[..., ChatOpenAI]
) -> None:
    app = build_graph("react", model=chat_model(), tools=[search])
    with pytest.raises(UsageError, match=r'\{"configurable": \{"thread_id": "\.\.\."\}\}'):
        app.invoke({"task": TASK})
    with pytest.raises(UsageError, match="thread id"):
        app.get_state({"configurable": {}})


def test_tool_names_that_cannot_work_are_refused_at_build(
    home: Path, chat_model: Callable[..., ChatOpenAI]
) -> None:
    @tool
    def finish(output: str) -> str:
        """Finish the report."""
        return output

    with pytest.raises(ToolDeclarationError, match="'finish' is reserved for run control"):
        build_graph("react", model=chat_model(), tools=[search, finish])

    @tool("search")
    def other_search(query: str) -> str:
        """Search the web."""
        return query

    with pytest.raises(ToolDeclarationError, match="two different tools"):
        build_graph("react", model=chat_model(), tools=[search, other_search])


@pytest.mark.parametrize("arch", ["react", "hybrid"])
def test_a_read_only_question_fits_two_model_calls_in_hybrid_as_in_react(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], arch: str
) -> None:
    """Hybrid's analyze and publish phases have no tools here, so they are not asked."""
    openai_server.add(
        tool_calls(tool_call("search", {"query": "billing service"})),
        _finish("the data team owns billing"),
    )
    app = build_graph(arch, model=chat_model(), tools=[search])
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": f"ro-{arch}"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "the data team owns billing"
    assert len(openai_server.requests) == 2 and not openai_server.unexpected


def test_a_fork_of_an_old_checkpoint_asks_the_model_nothing(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(
        tool_calls(tool_call("search", {"query": "billing"})), _finish("data team owns billing")
    )
    app = build_graph("react", model=chat_model(), tools=[search])
    cfg = {"configurable": {"thread_id": "fork"}}
    app.invoke({"task": TASK}, cfg)
    first = [s for s in app.get_state_history(cfg) if s.next == ("decide",)][-1]
    out = app.invoke(None, first.config)
    assert out["output"] == "data team owns billing"  # the logged reply, replayed
    assert len(openai_server.requests) == 2 and not openai_server.unexpected


def test_runs_started_from_python_show_in_the_cli(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(
        tool_calls(tool_call("search", {"query": "billing"})),
        _finish("data team owns billing"),
        tool_calls(tool_call("post", {"message": "billing belongs to data"})),
    )
    asks = [{"tool": "post", "decision": "require_approval", "reason": "the channel is public"}]
    app = build_graph("react", model=chat_model(), tools=[search, post], policy=asks)
    app.invoke({"task": TASK}, {"configurable": {"thread_id": "py-done"}})
    to_post = {**TASK, "success_checks": [{"kind": "tool_succeeded", "target": "post"}]}
    paused = app.invoke({"task": to_post}, {"configurable": {"thread_id": "py-wait"}})
    assert paused["__interrupt__"]

    listed = cli("runs", home=home)
    assert listed.code == 0, listed
    rows = {line.split("│")[1].strip(): line for line in listed.out.splitlines() if "│" in line}
    assert "COMPLETED" in rows["py-done"] and "WAITING" in rows["py-wait"]
    assert "? (Python)" in rows["py-wait"] and "gpt-4o-mini" in rows["py-wait"]
    assert "started from Python" in listed.out

    status = cli("status", "py-wait", home=home)
    assert status.code == 0, status
    assert "status: WAITING" in status.out
    assert "waiting for approval of post(message=billing belongs to data)" in status.out
    assert "continue it in Python" in status.out and '"thread_id": "py-wait"' in status.out
    assert "execgraph approve" not in status.out  # the CLI cannot rebuild this graph

    trace = cli("trace", "py-done", home=home)
    assert trace.code == 0 and "run.admitted" in trace.out and "model.called" in trace.out

    refused = cli("approve", "py-wait", home=home)
    assert refused.code == 2
    assert "was started from Python" in refused.err

    openai_server.add(_finish("posted it"))
    [pause] = paused["__interrupt__"]
    done = app.invoke(
        Command(resume={pause.id: {"action": "approve"}}),
        {"configurable": {"thread_id": "py-wait"}},
    )
    assert done["status"] == "COMPLETED", done.get("error")
    assert "COMPLETED" in cli("status", "py-wait", home=home).out
