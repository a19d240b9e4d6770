"""A long string of an event payload is stored once, however many events carry it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from execgraph.graph import build_graph
from execgraph.state.events import EventType, make_event
from execgraph.state.store import ExecutionStore
from execgraph.state.store.shared_values import INLINE_CHARS, MARK, restore_shared, shared_refs
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.files import FileAdapter

LONG = "é" + "0123456789abcdef" * (INLINE_CHARS // 8)  # two thresholds long, not ASCII


def test_events_sharing_a_long_string_read_back_whole(store: ExecutionStore) -> None:
    payloads = [
        {"arguments": {"content": LONG, "path": "a.txt"}},
        {"message": {"tool_calls": [{"args": {"content": LONG}}]}, "note": "short"},
        {"arguments": {"content": LONG + "!"}},  # another string: another artifact
    ]
    events = [
        make_event(EventType.TOOL_REQUESTED, "run-s", call_id=f"c{i}", payload=p)
        for i, p in enumerate(payloads)
    ]
    store.append_events(events)
    assert [e.payload for e in store.events("run-s")] == payloads
    assert store.event(events[1].event_id).payload == payloads[1]  # type: ignore[union-attr]
    assert store.events("run-s", call_id="c2")[0].payload == payloads[2]


def test_short_payloads_are_stored_as_they_were() -> None:
    body = '{"payload":{"arguments":{"path":"a.txt"}}}'
    assert shared_refs(body) == set() and restore_shared(body, {}) == body


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _cells_holding(db: Path, needle: str) -> int:
    with sqlite3.connect(db) as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        count = 0
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table}"):
                for cell in row:
                    text = cell.decode("utf-8", "replace") if isinstance(cell, bytes) else cell
                    count += isinstance(text, str) and needle in text
        return count


def test_an_accepted_argument_is_stored_once_in_the_execution_store(tmp_path: Path) -> None:
    """A real run writing 300 KB: the reply, the decision and the request all carry the
    content, the store holds it once, and the log reads back with it whole."""
    content = "line of the report\n" * 16_000
    model = ScriptedChatModel(
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
    ws = tmp_path / "ws"
    ws.mkdir()
    graph = build_graph("react", model=model, tools=[FileAdapter(ws)], home=tmp_path, workspace=ws)
    out = graph.invoke({"task": {"goal": "write r.md"}}, {"configurable": {"thread_id": "t"}})
    assert out["status"] == "COMPLETED" and (ws / "r.md").read_text() == content

    assert _cells_holding(tmp_path / "exec.db", content) == 1
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        events = store.events(out["contract"]["run_id"])
    carrying = {e.type.value for e in events if content in _strings(e.payload)}
    assert {"model.called", "decision.recorded", "tool.requested"} <= carrying
    assert all(MARK not in str(e.payload) for e in events)
