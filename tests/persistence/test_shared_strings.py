"""The embedded checkpointer stores a long string once per thread, and reads it back whole."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Send

from execgraph.graph import build_graph
from execgraph.persistence.saver import open_embedded_saver
from execgraph.persistence.shared_strings import INLINE_CHARS, PREFIX, SharingSerializer
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.files import FileAdapter

CONTENT = "a line of the report, é\n" * 12_000  # about 290 KB, not ASCII


def _writer(content: str) -> ScriptedChatModel:
    return ScriptedChatModel(
        [
            AIMessage(
                "",
                tool_calls=[
                    {"name": "write_file", "args": {"path": "r.md", "content": content}, "id": "w"}
                ],
            ),
            AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "ok"}, "id": "f"}]),
        ]
    )


def _blobs_holding(db: Path, needle: bytes) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        found: dict[str, int] = {}
        for table in ("checkpoints", "writes", "shared_strings"):
            for row in conn.execute(f"SELECT * FROM {table}"):
                hits = sum(isinstance(c, bytes) and needle in c for c in row)
                if hits:
                    found[table] = found.get(table, 0) + hits
        return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return _strings(value.model_dump()) if hasattr(value, "model_dump") else []


def test_a_long_argument_is_checkpointed_once_and_read_back_everywhere(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    graph = build_graph(
        "react", model=_writer(CONTENT), tools=[FileAdapter(ws)], home=tmp_path, workspace=ws
    )
    cfg = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"task": {"goal": "write r.md"}}, cfg)
    assert out["status"] == "COMPLETED" and (ws / "r.md").read_text() == CONTENT

    # Four channels carried it (decisions, pending, history, messages); one row holds it.
    assert _blobs_holding(tmp_path / "checkpoints.db", CONTENT.encode()) == {"shared_strings": 1}
    [ai] = [m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls][:1]
    assert ai.tool_calls[0]["args"]["content"] == CONTENT

    # Another process's saver on the same file reads the thread back whole.
    again = build_graph(
        "react", model=_writer(""), tools=[FileAdapter(ws)], home=tmp_path, workspace=ws
    )
    values = again.get_state(cfg).values
    assert CONTENT in _strings(values["messages"]) and CONTENT in _strings(values["history"])
    assert not any(PREFIX in s for s in _strings(values))
    history = list(again.get_state_history(cfg))
    assert any(CONTENT in _strings(h.values.get("decisions", [])) for h in history)


def test_async_runs_and_a_deleted_thread_take_their_strings(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    graph = build_graph(
        "react", model=_writer(CONTENT), tools=[FileAdapter(ws)], home=tmp_path, workspace=ws
    )
    cfg = {"configurable": {"thread_id": "a"}}
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("write r.md")]}, cfg))
    assert out["status"] == "COMPLETED"
    assert asyncio.run(graph.aget_state(cfg)).values["messages"][1].tool_calls[0]["args"] == {
        "path": "r.md",
        "content": CONTENT,
    }
    saver = open_embedded_saver(tmp_path / "checkpoints.db")
    saver.delete_thread("a")
    assert _blobs_holding(tmp_path / "checkpoints.db", CONTENT.encode()) == {}


def test_the_serializer_walks_only_long_values_and_keeps_their_types() -> None:
    stored: dict[str, bytes] = {}

    def fetch(refs: Any) -> dict[str, bytes]:
        return {r: stored[r] for r in refs if r in stored}

    inner = JsonPlusSerializer()
    serde = SharingSerializer(inner, fetch)
    small = {"a": "short", "n": 1}
    assert serde.loads_typed(serde.dumps_typed(small)) == small
    assert serde.take_pending() == []  # nothing long: nothing walked, nothing to store

    long = "x" * (INLINE_CHARS + 1)
    value = {
        "send": Send("executor", {"arguments": {"content": long}}),
        "pair": ("k", long),
        "message": AIMessage(long),
    }
    blob = serde.dumps_typed(value)
    assert long.encode() not in blob[1]
    stored.update(serde.take_pending())
    assert len(stored) == 1  # one string, met three times, stored once
    back = serde.loads_typed(blob)
    assert back == inner.loads_typed(inner.dumps_typed(value))  # as if nothing were shared
    assert isinstance(back["message"], AIMessage) and back["message"].content == long
