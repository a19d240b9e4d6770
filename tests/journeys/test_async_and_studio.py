"""Journey: an async application on the default graph, then the same tools for Studio.

A user with ``ChatOpenAI`` and ordinary LangChain ``@tool``s builds a graph with no
checkpointer (the embedded default under ``$EXECGRAPH_HOME``) and drives it the async way:
``await app.ainvoke``, ``async for ... in app.astream``, ``app.astream_events(version="v2")``,
an approval resumed with ``Command(resume=...)``. For LangGraph Studio they compile the
same graph with ``checkpointer=False`` and get an input schema a form can be drawn from.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from execgraph import build_graph
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

refunded: list[str] = []


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    return f"order {order_id}: delivered"


lookup_order.metadata = {"effect": "read"}  # declared: runs without a person


@tool
def refund_order(order_id: str) -> str:
    """Refund an order."""
    refunded.append(order_id)
    return f"refunded {order_id}"


def _task(tool_name: str, goal: str) -> dict[str, Any]:
    checks = [{"kind": "tool_succeeded", "target": tool_name}]
    return {"task": {"goal": goal, "success_checks": checks}}


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _look_then_finish(server: OpenAIServer, order_id: str) -> None:
    server.add(
        tool_calls(tool_call("lookup_order", {"order_id": order_id})),
        tool_calls(tool_call("finish", {"output": f"{order_id} was delivered."})),
    )


def test_await_ainvoke_on_the_default_graph(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    _look_then_finish(openai_server, "A-1")
    app = build_graph("react", model=chat_model(), tools=[lookup_order])

    out = asyncio.run(app.ainvoke(_task("lookup_order", "Where is A-1?"), _cfg("a")))

    assert out["status"] == "COMPLETED" and out["output"] == "A-1 was delivered."
    [result] = out["results"].values()
    assert result["data"] == "order A-1: delivered"
    # The checkpoints are in the home's SQLite file, on disk once ``ainvoke`` returned.
    latest = SqliteSaver(sqlite3.connect(home / "checkpoints.db")).get_tuple(_cfg("a"))
    assert latest is not None and latest.checkpoint["channel_values"]["status"] == "COMPLETED"
    assert openai_server.unexpected == []


def test_async_for_over_astream(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    _look_then_finish(openai_server, "B-2")
    app = build_graph("react", model=chat_model(), tools=[lookup_order])

    async def run() -> list[dict[str, Any]]:
        task = _task("lookup_order", "Where is B-2?")
        return [chunk async for chunk in app.astream(task, _cfg("b"), stream_mode="updates")]

    chunks = asyncio.run(run())

    nodes = [node for chunk in chunks for node in chunk]
    assert nodes[0] == "admit" and "decide" in nodes and nodes[-1] == "verify"
    assert chunks[-1]["verify"]["status"] == "COMPLETED"
    assert openai_server.unexpected == []


def test_astream_events_streams_the_model_and_ends_completed(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    _look_then_finish(openai_server, "C-3")
    app = build_graph("react", model=chat_model(), tools=[lookup_order])

    async def run() -> list[Any]:
        task = _task("lookup_order", "Where is C-3?")
        return [e async for e in app.astream_events(task, _cfg("c"), version="v2")]

    events = asyncio.run(run())

    kinds = [e["event"] for e in events]
    assert kinds.count("on_chat_model_start") == 2
    assert "on_chat_model_stream" in kinds  # the model's reply arrives as chunks
    assert all(r.body.get("stream") for r in openai_server.requests)
    [end] = [e for e in events if e["event"] == "on_chain_end" and e["name"] == "react"]
    assert end["data"]["output"]["status"] == "COMPLETED"
    assert openai_server.unexpected == []


def test_an_approval_resumed_under_ainvoke(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    refunded.clear()
    openai_server.add(
        tool_calls(tool_call("refund_order", {"order_id": "D-4"})),
        tool_calls(tool_call("finish", {"output": "Refunded D-4."})),
    )
    tools = [lookup_order, refund_order]  # refund_order declares nothing: a person is asked
    app = build_graph("react", model=chat_model(), tools=tools)
    config = _cfg("d")

    async def run() -> dict[str, Any]:
        paused = await app.ainvoke(_task("refund_order", "Refund D-4"), config)
        assert paused["status"] == "WAITING" and refunded == []
        [asked] = (await app.aget_state(config)).interrupts
        assert asked.value["tool"] == "refund_order"
        return await app.ainvoke(Command(resume={asked.id: {"action": "approve"}}), config)

    out = asyncio.run(run())

    assert out["status"] == "COMPLETED" and refunded == ["D-4"]
    assert openai_server.unexpected == []


def test_the_same_graph_for_studio_has_a_form(
    chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    # What a ``langgraph.json`` entry ``"./agent.py:graph"`` would serve.
    graph = build_graph("react", model=chat_model(), tools=[lookup_order], checkpointer=False)

    schema = graph.get_input_jsonschema()

    assert set(schema["properties"]) == {"task", "messages"}
    assert schema["$defs"]["TaskInput"]["required"] == ["goal"]
