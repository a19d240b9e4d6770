"""The embedded default checkpointer serves async runs: ``ainvoke``, ``astream`` and
``astream_events`` on a graph built with no ``checkpointer=``, approvals resumed under
``ainvoke``, and one thread continued across sync and async runs (the same SQLite file)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.graph.build import DEFAULT_DURABILITY
from execgraph.persistence.saver import EmbeddedSqliteSaver
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

_TASK = {"task": {"goal": "look", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}}
_PUBLISH = {
    "task": {"goal": "publish", "success_checks": [{"kind": "tool_succeeded", "target": "publish"}]}
}


def _call(name: str, n: int, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{n}"}])


def _finish() -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}]
    )


@tool_spec(effect="read")
def look(i: int) -> str:
    """Look at item i."""
    return f"item {i}"


def _looker(home: Path, turns: int = 3) -> Any:
    model = ScriptedChatModel([*(_call("look", i, i=i) for i in range(turns)), _finish()])
    return build_graph("react", model=model, tools=[look], home=home)


def _publisher(home: Path, published: list[str], *, resumed: bool = False) -> Any:
    """A graph that publishes once (after an approval) then finishes; ``resumed``: a
    graph that takes over a paused thread, whose model is asked only for the finish."""

    @tool_spec(effect="irreversible")
    def publish(doc: str) -> str:
        """Publish a document."""
        published.append(doc)
        return "published"

    replies = [_finish()] if resumed else [_call("publish", 0, doc="report"), _finish()]
    model = ScriptedChatModel(replies)
    return build_graph("react", model=model, tools=[publish], home=home)


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_the_default_checkpointer_is_the_embedded_saver(tmp_path: Path) -> None:
    app = _looker(tmp_path)
    assert isinstance(app.checkpointer, EmbeddedSqliteSaver)
    assert isinstance(app.checkpointer, SqliteSaver)  # LangGraph's own saver, same file format


def test_ainvoke_on_the_default_graph_leaves_every_checkpoint_on_disk(tmp_path: Path) -> None:
    app = _looker(tmp_path)
    assert DEFAULT_DURABILITY == "async"

    out = asyncio.run(app.ainvoke(_TASK, _cfg("ainvoke")))

    assert out["status"] == "COMPLETED"
    # Read back as another process would, right after ``ainvoke`` returned.
    reader = SqliteSaver(sqlite3.connect(tmp_path / "checkpoints.db"))
    latest = reader.get_tuple(_cfg("ainvoke"))
    assert latest is not None
    assert latest.checkpoint["channel_values"]["status"] == "COMPLETED"
    turns = {
        int(c.checkpoint["channel_values"].get("turn") or 0) for c in reader.list(_cfg("ainvoke"))
    }
    assert turns == set(range(5))  # the input, four turns, none skipped


def test_astream_on_the_default_graph(tmp_path: Path) -> None:
    app = _looker(tmp_path)

    async def run() -> list[dict[str, Any]]:
        return [chunk async for chunk in app.astream(_TASK, _cfg("astream"), stream_mode="updates")]

    chunks = asyncio.run(run())

    nodes = [node for chunk in chunks for node in chunk]
    assert nodes[0] == "admit" and nodes.count("decide") == 4 and nodes[-1] == "verify"
    assert app.get_state(_cfg("astream")).values["status"] == "COMPLETED"


def test_astream_events_on_the_default_graph(tmp_path: Path) -> None:
    app = _looker(tmp_path, turns=1)

    async def run() -> list[dict[str, Any]]:
        events = app.astream_events(_TASK, _cfg("events"), version="v2")
        return [dict(event) async for event in events]

    events = asyncio.run(run())

    kinds = {e["event"] for e in events}
    assert {"on_chain_start", "on_chat_model_start", "on_chat_model_end"} <= kinds
    [end] = [e for e in events if e["event"] == "on_chain_end" and e["name"] == "react"]
    assert end["data"]["output"]["status"] == "COMPLETED"


def test_an_approval_pauses_and_resumes_under_ainvoke_on_the_default_graph(tmp_path: Path) -> None:
    published: list[str] = []
    app = _publisher(tmp_path, published)
    config = _cfg("approve")

    async def run() -> dict[str, Any]:
        paused = await app.ainvoke(_PUBLISH, config)
        assert paused["status"] == "WAITING" and published == []
        [asked] = (await app.aget_state(config)).interrupts
        assert asked.value["tool"] == "publish"
        return await app.ainvoke(Command(resume={asked.id: {"action": "approve"}}), config)

    out = asyncio.run(run())

    assert out["status"] == "COMPLETED" and published == ["report"]


def test_a_thread_started_sync_is_continued_async(tmp_path: Path) -> None:
    published: list[str] = []
    app = _publisher(tmp_path, published)
    config = _cfg("sync-then-async")

    paused = app.invoke(_PUBLISH, config)
    assert paused["status"] == "WAITING"
    [asked] = app.get_state(config).interrupts

    async def resume() -> dict[str, Any]:
        [seen] = (await app.aget_state(config)).interrupts  # the sync run's checkpoint
        assert seen.id == asked.id
        return await app.ainvoke(Command(resume={asked.id: {"action": "approve"}}), config)

    out = asyncio.run(resume())

    assert out["status"] == "COMPLETED" and published == ["report"]
    assert app.get_state(config).values["status"] == "COMPLETED"  # and sync reads it back


def test_a_thread_started_async_is_continued_sync_by_another_graph(tmp_path: Path) -> None:
    # A second build over the same home (another process's view): its own connection.
    published: list[str] = []
    config = _cfg("async-then-sync")
    paused = asyncio.run(_publisher(tmp_path, published).ainvoke(_PUBLISH, config))
    assert paused["status"] == "WAITING"

    again = _publisher(tmp_path, published, resumed=True)
    [asked] = again.get_state(config).interrupts
    out = again.invoke(Command(resume={asked.id: {"action": "approve"}}), config)

    assert out["status"] == "COMPLETED" and published == ["report"]


def test_one_graph_serves_one_event_loop_after_another(tmp_path: Path) -> None:
    # A script may call ``asyncio.run`` more than once: nothing is bound to the first loop.
    model = ScriptedChatModel([_call("look", 0, i=0), _finish(), _call("look", 1, i=1), _finish()])
    app = build_graph("react", model=model, tools=[look], home=tmp_path)

    first = asyncio.run(app.ainvoke(_TASK, _cfg("loop-1")))
    second = asyncio.run(app.ainvoke(_TASK, _cfg("loop-2")))

    assert [first["status"], second["status"]] == ["COMPLETED", "COMPLETED"]


def test_sync_reads_work_inside_a_running_loop(tmp_path: Path) -> None:
    # ``get_state`` from async code (a notebook cell, an async handler) must not deadlock.
    app = _looker(tmp_path, turns=1)

    async def run() -> str:
        await app.ainvoke(_TASK, _cfg("inside"))
        return str(app.get_state(_cfg("inside")).values["status"])

    assert asyncio.run(run()) == "COMPLETED"
