"""LangGraph's store, the long-term memory tools share across threads, as ``create_agent``.

A ``create_agent`` user passes ``store=InMemoryStore()`` and writes tools that reach it
through ``ToolRuntime.store`` or ``InjectedStore``. The same ``store=`` on ``build_graph``
gives the tools that store: a preference saved in one thread is read in another, by
execgraph and by ``create_agent`` alike, on the same scripted server. The run's own
record stays in the execution store (``execution_store=``, or the embedded default).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import InjectedStore
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from execgraph import build_graph
from execgraph.state.errors import ToolDeclarationError, UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.journeys.everyday import agent, cfg
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls


@tool
def remember(user: str, food: str, runtime: ToolRuntime) -> str:
    """Remember a user's favourite food."""
    assert runtime.store is not None
    runtime.store.put(("preferences",), user, {"food": food})
    return f"remembered {food} for {user}"


remember.metadata = {"effect": "write"}


@tool
def recall(user: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Recall a user's favourite food."""
    item = store.get(("preferences",), user)
    return item.value["food"] if item else "nothing remembered"


recall.metadata = {"effect": "read"}
MEMORY_TOOLS = [remember, recall]


def _script(server: OpenAIServer) -> None:
    server.add(
        tool_calls(tool_call("remember", {"user": "ann", "food": "ramen"})),
        text("Noted."),
        tool_calls(tool_call("recall", {"user": "ann"})),
        text("Ann likes ramen."),
    )


def _two_threads(app: Any) -> list[str]:
    """Remember in one thread, recall in another: what the recall call returned."""
    app.invoke({"messages": [HumanMessage("Ann's favourite food is ramen.")]}, cfg("first"))
    out = app.invoke({"messages": [HumanMessage("What does Ann like?")]}, cfg("second"))
    return [str(m.content) for m in out["messages"] if getattr(m, "name", "") == "recall"]


@pytest.mark.parametrize("record", ["embedded", "execution_store"])
def test_tools_share_the_store_across_threads_as_with_create_agent(
    home: Path,
    tmp_path: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    record: str,
) -> None:
    store = InMemoryStore()
    kwargs: dict[str, Any] = {}
    if record == "execution_store":
        kwargs["execution_store"] = SqliteExecutionStore(tmp_path / "runs.db")
    _script(openai_server)
    app = build_graph("react", model=chat_model(), tools=MEMORY_TOOLS, store=store, **kwargs)
    recalled = _two_threads(app)
    assert any("ramen" in r for r in recalled), recalled
    assert store.get(("preferences",), "ann").value == {"food": "ramen"}  # type: ignore[union-attr]
    executions = kwargs.get("execution_store") or SqliteExecutionStore(home / "exec.db")
    assert executions.events("second")  # the runs are recorded where execgraph records

    _script(openai_server)
    theirs = InMemoryStore()
    assert any("ramen" in r for r in _two_threads(agent(chat_model(), MEMORY_TOOLS, store=theirs)))
    assert not openai_server.unexpected


def test_a_store_of_neither_kind_and_two_execution_stores_are_refused(
    home: Path, tmp_path: Path, chat_model: Callable[..., ChatOpenAI]
) -> None:
    with pytest.raises(UsageError, match="BaseStore"):
        build_graph("react", model=chat_model(), tools=MEMORY_TOOLS, store={"ann": "ramen"})
    one, two = SqliteExecutionStore(tmp_path / "a.db"), SqliteExecutionStore(tmp_path / "b.db")
    with pytest.raises(UsageError, match="two execution stores"):
        build_graph("react", model=chat_model(), tools=MEMORY_TOOLS, store=one, execution_store=two)


def test_a_tool_that_needs_a_store_in_a_graph_without_one_raises_how_to_give_it(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(tool_calls(tool_call("recall", {"user": "ann"})))
    app = build_graph("react", model=chat_model(), tools=MEMORY_TOOLS)
    # the developer's to fix, as create_agent's ToolNode raises for a graph without a store
    with pytest.raises(ToolDeclarationError, match=re.escape("store=InMemoryStore()")):
        app.invoke({"messages": [HumanMessage("What does Ann like?")]}, cfg("nostore"))
    assert app.get_state(cfg("nostore")).values["status"] == "FAILED"
    assert len(openai_server.requests) == 1  # the model is not told, nor asked again
    assert not openai_server.unexpected
