"""Streaming shows the run: the event log on ``custom``, tool messages on ``messages``,
and a running call's name and elapsed time while it runs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.nodes.executor.threads import progress
from execgraph.state.store.live import LOG_ONLY
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

_seen_tick = threading.Event()


@tool_spec(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool_spec(effect="irreversible")
def publish(doc: str) -> str:
    """Publish a document (a person approves first)."""
    return f"published {doc}"


@tool_spec(effect="read")
def crunch(n: int) -> str:
    """Crunch numbers until the stream has shown it still running (at most 30 s)."""
    return "seen running" if _seen_tick.wait(timeout=30) else "never seen"


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _app(tmp_path: Path, replies: list[Any]) -> tuple[Any, SqliteExecutionStore]:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[lookup, publish, crunch],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app, store


CFG = {"configurable": {"thread_id": "live"}}
TASK = {
    "task": {
        "goal": "publish the report",
        "success_checks": [{"kind": "tool_succeeded", "target": "publish"}],
    }
}


def _custom(app: Any, inp: Any) -> list[dict[str, Any]]:
    return list(app.stream(inp, CFG, stream_mode="custom"))


def test_the_custom_stream_carries_every_logged_event_once_across_a_resume(
    tmp_path: Path,
) -> None:
    replies = [
        _call("lookup", {"key": "a"}, "m1"),
        _call("publish", {"doc": "report.md"}, "m2"),
        _call("finish", {"output": "published"}, "m3"),
    ]
    app, store = _app(tmp_path, replies)
    before = _custom(app, TASK)  # up to the approval pause
    [pause] = app.get_state(CFG).interrupts
    after = _custom(app, Command(resume={pause.id: {"action": "approve"}}))
    assert app.get_state(CFG).values["status"] == "COMPLETED"

    streamed = [c["event_id"] for c in before + after if c.get("event_id")]
    logged = [e.event_id for e in store.events("live") if e.type not in LOG_ONLY]
    assert len(streamed) == len(set(streamed))  # the resumed node re-derived some: sent once
    assert sorted(streamed) == sorted(logged)  # every event of the log, nothing else
    kinds = [c["kind"] for c in before if c.get("event_id")]
    assert kinds.index("tool.completed") < kinds.index("approval.requested")  # as it happens
    asked = next(c for c in before if c.get("kind") == "approval.requested")
    assert asked["call_id"] == "t2.c0" and asked["payload"]["tool"] == "publish"
    assert {"tool.resolved", "tool.started", "tool.completed", "run.finished"} <= {
        c["kind"] for c in before + after
    }


def test_tool_messages_stream_from_the_node_that_ran_the_call(tmp_path: Path) -> None:
    replies = [
        _call("lookup", {"key": "a"}, "m1"),
        _call("publish", {"doc": "report.md"}, "m2"),
        _call("finish", {"output": "published"}, "m3"),
    ]
    app, _ = _app(tmp_path, replies)
    first = list(app.stream(TASK, CFG, stream_mode="messages"))
    [pause] = app.get_state(CFG).interrupts
    resumed = list(
        app.stream(Command(resume={pause.id: {"action": "approve"}}), CFG, stream_mode="messages")
    )
    tools = [
        (m.tool_call_id, meta["langgraph_node"])
        for m, meta in first + resumed
        if isinstance(m, ToolMessage)
    ]
    # the approved call: its own node; the accepted finish: the verifier's answer
    assert tools == [("m1", "decide"), ("m2", "executor"), ("m3", "verify")]
    ids = [m.id for m, _ in first + resumed]
    assert len(ids) == len(set(ids))  # each message once
    final = app.get_state(CFG).values["messages"]
    assert [m.tool_call_id for m in final if isinstance(m, ToolMessage)] == ["m1", "m2", "m3"]


def test_a_running_call_shows_its_tool_and_elapsed_time_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "TICK_S", 0.05)
    _seen_tick.clear()
    replies = [_call("crunch", {"n": 7}, "m1"), _call("finish", {"output": "crunched"}, "m2")]
    app, _ = _app(tmp_path, replies)
    checks = [{"kind": "tool_succeeded", "target": "crunch"}]
    task = {"task": {"goal": "crunch", "success_checks": checks}}
    chunks: list[dict[str, Any]] = []
    for chunk in app.stream(task, CFG, stream_mode="custom"):
        chunks.append(chunk)
        if chunk.get("kind") == "tool.running" and chunk["elapsed_s"] > 0:
            _seen_tick.set()  # the tool waits for this: the tick came while it ran
    running = [c for c in chunks if c.get("kind") == "tool.running"]
    assert running[0] == {
        "kind": "tool.running",
        "call_id": "t1.c0",
        "tool": "crunch",
        "run_id": "live",
        "turn_id": "t1",
        "elapsed_s": 0.0,
    }
    elapsed = [c["elapsed_s"] for c in running]
    assert elapsed == sorted(elapsed) and elapsed[-1] > 0
    result = app.get_state(CFG).values["results"]["t1.c0"]
    assert result["data"] == "seen running"
    assert not progress._TICKER._watches  # the call's registration ended with it
