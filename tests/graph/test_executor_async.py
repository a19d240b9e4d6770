"""Under ``ainvoke`` every parallel call runs at once, and an approval still pauses."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

WIDTH = 10


class Gauge:
    """How many calls run at the same moment."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.all_in = asyncio.Event()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def _batch(name: str, k: int) -> AIMessage:
    calls = [{"name": name, "args": {"i": j}, "id": f"p{j}"} for j in range(k)]
    return AIMessage(content="", tool_calls=calls)


def _finish() -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "finish", "args": {"output": "ok"}, "id": "f"}]
    )


def _task(tool: str) -> dict[str, Any]:
    checks = [{"kind": "tool_succeeded", "target": tool}]
    return {"task": {"goal": "go", "success_checks": checks}}


def test_parallel_async_calls_all_run_at_once(tmp_path: Path) -> None:
    gauge = Gauge()

    @tool_spec(effect="read")
    async def wait_a_bit(i: int) -> str:
        """Hold the call open until every call of the batch has started (or 5 s pass)."""
        gauge.enter()
        try:
            for _ in range(500):
                if gauge.most >= WIDTH:
                    break
                await asyncio.sleep(0.01)
            return f"ok {i}"
        finally:
            gauge.leave()

    model = ScriptedChatModel([_batch("wait_a_bit", WIDTH), _finish()])
    app = build_graph(
        "react", model=model, tools=[wait_a_bit], checkpointer=InMemorySaver(), home=tmp_path
    )
    config = {"configurable": {"thread_id": "async"}}
    out = asyncio.run(app.ainvoke(_task("wait_a_bit"), config))
    assert out["status"] == "COMPLETED"
    assert gauge.most == WIDTH  # more than the loop's default executor would run at once
    assert sorted(r["data"] for r in out["results"].values()) == sorted(
        f"ok {i}" for i in range(WIDTH)
    )


def test_an_approval_pauses_and_resumes_under_ainvoke(tmp_path: Path) -> None:
    published: list[str] = []

    @tool_spec(effect="irreversible")
    async def publish(doc: str) -> str:
        """Publish a document."""
        published.append(doc)
        return "published"

    model = ScriptedChatModel(
        [
            AIMessage(
                content="", tool_calls=[{"name": "publish", "args": {"doc": "r"}, "id": "x"}]
            ),
            _finish(),
        ]
    )
    app = build_graph(
        "react", model=model, tools=[publish], checkpointer=InMemorySaver(), home=tmp_path
    )
    config = {"configurable": {"thread_id": "approve"}}

    async def run() -> dict[str, Any]:
        paused = await app.ainvoke(_task("publish"), config)
        assert paused["status"] == "WAITING" and published == []
        [asked] = (await app.aget_state(config)).interrupts
        assert asked.value["tool"] == "publish"
        return await app.ainvoke(Command(resume={asked.id: {"action": "approve"}}), config)

    out = asyncio.run(run())
    assert out["status"] == "COMPLETED" and published == ["r"]
