"""The event log as it happens: a call's ``tool.started`` reaches the custom stream before
its tool returns, and every committed checkpoint is logged as ``state.checkpointed``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

_started_seen = threading.Event()


@tool_spec(effect="read")
def slow_lookup(key: str) -> str:
    """Look a key up, slowly: waits until the stream has shown this call started."""
    return "seen starting" if _started_seen.wait(timeout=20) else "start not seen"


def _app(tmp_path: Path) -> tuple[Any, SqliteExecutionStore]:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    replies = [
        AIMessage("", tool_calls=[{"name": "slow_lookup", "args": {"key": "a"}, "id": "m1"}]),
        AIMessage("found it"),
    ]
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[slow_lookup],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app, store


def test_a_read_calls_start_is_streamed_before_its_tool_returns(tmp_path: Path) -> None:
    _started_seen.clear()
    app, _ = _app(tmp_path)
    cfg = {"configurable": {"thread_id": "started"}}
    kinds = []
    for chunk in app.stream({"task": {"goal": "Look up a."}}, cfg, stream_mode="custom"):
        if chunk.get("event_id"):
            kinds.append(chunk["kind"])
        if chunk.get("kind") == "tool.started":
            _started_seen.set()  # the tool is waiting for this
    assert app.get_state(cfg).values["results"]["t1.c0"]["data"] == "seen starting"
    # in the log's order: the request and its resolution come before the start
    call = [k for k in kinds if k.startswith("tool.")]
    assert call == ["tool.requested", "tool.resolved", "tool.started", "tool.completed"]


def test_every_committed_checkpoint_is_logged(tmp_path: Path) -> None:
    _started_seen.set()
    app, store = _app(tmp_path)
    cfg = {"configurable": {"thread_id": "saved"}}
    app.invoke({"task": {"goal": "Look up a."}}, cfg)
    saved = {s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(cfg)}
    logged = [e for e in store.events("saved") if e.type == EventType.STATE_CHECKPOINTED]
    assert saved and {e.payload["checkpoint_id"] for e in logged} >= saved
    top = [e for e in logged if e.payload["checkpoint_ns"] == ""]
    assert {e.payload["checkpoint_id"] for e in top} == saved
    steps = [e.payload["step"] for e in top]
    assert steps == sorted(steps) and top[0].payload["source"] == "input"
