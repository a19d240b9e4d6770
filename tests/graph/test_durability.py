"""Every execgraph graph defaults to sync durability: a decision is on disk before it acts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from graph import build_graph
from nodes.models import ScriptedChatModel
from tools import InvokeContext, tool_spec


def _call(i: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "look", "args": {"i": i}, "id": f"c{i}"}])


def test_the_decision_is_durable_before_its_call_runs(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.db"
    seen: list[bool] = []

    @tool_spec(effect="read")
    def look(i: int, ctx: InvokeContext) -> str:
        """Look at what the checkpointer has on disk for this run right now."""
        reader = SqliteSaver(sqlite3.connect(path))  # another connection, as another process
        latest = reader.get_tuple({"configurable": {"thread_id": "durable"}})
        assert latest is not None
        pending = latest.checkpoint["channel_values"].get("__pregel_tasks") or []
        seen.append(any(ctx.call_id in repr(send) for send in pending))
        return "ok"

    replies: list[Any] = [_call(i) for i in range(5)]
    replies.append(
        AIMessage(content="", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}])
    )
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    app = build_graph(
        "react", model=ScriptedChatModel(replies), tools=[look], checkpointer=saver, home=tmp_path
    )
    task = {
        "task": {"goal": "look", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}
    }
    out = app.invoke(task, {"configurable": {"thread_id": "durable"}})  # no durability given
    assert out["status"] == "COMPLETED"
    assert seen == [True] * 5  # each call's Send was in a checkpoint on disk before it ran
