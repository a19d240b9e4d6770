"""An ``async`` tool is stopped for real when the executor signals its call.

A coroutine is cancelled at its deadline or on a cancel request, so its ``finally``
blocks and context managers run at once (a session closes, a server process ends), rather
than leaving the coroutine running on an abandoned thread after its call was reported.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import build_graph, request_cancel, tool_spec
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(60)


def _graph(tmp_path: Path, tool: Any) -> Any:
    model = ScriptedChatModel(
        [
            AIMessage(content="", tool_calls=[{"name": tool.name, "args": {}, "id": "c1"}]),
            AIMessage(
                content="", tool_calls=[{"name": "abort", "args": {"reason": "x"}, "id": "c2"}]
            ),
        ]
    )
    return build_graph(
        "react", model=model, tools=[tool], checkpointer=InMemorySaver(), home=tmp_path
    )


def _sleeper(stopped: Path, timeout_s: float | None = None) -> Any:
    @tool_spec(effect="read", timeout_s=timeout_s)
    async def wait_long() -> str:
        """Wait a long time."""
        try:
            await asyncio.sleep(30)
        finally:
            stopped.write_text("stopped")
        return "done"

    return wait_long


def test_an_async_tool_is_cancelled_at_its_deadline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stopped = tmp_path / "stopped"
    app = _graph(tmp_path, _sleeper(stopped, timeout_s=0.5))
    with caplog.at_level(logging.WARNING, logger="execgraph"):
        out = app.invoke({"task": {"goal": "wait"}}, {"configurable": {"thread_id": "t"}})
    [result] = out["results"].values()
    assert result["error"]["type"] == "DeadlineExceeded"
    assert stopped.read_text() == "stopped"  # its finally ran before the call was reported
    assert not [r for r in caplog.records if "abandoned" in r.getMessage()]


def test_an_async_tool_is_cancelled_when_its_run_is_cancelled(tmp_path: Path) -> None:
    stopped = tmp_path / "stopped"
    app = _graph(tmp_path, _sleeper(stopped))
    from execgraph.state.store.sqlite import SqliteExecutionStore

    def cancel_soon() -> None:
        time.sleep(1.0)
        with SqliteExecutionStore(tmp_path / "exec.db") as store:
            request_cancel(store, "t", "stop it")

    canceller = threading.Thread(target=cancel_soon)
    canceller.start()
    began = time.monotonic()
    out = app.invoke({"task": {"goal": "wait"}}, {"configurable": {"thread_id": "t"}})
    canceller.join()
    assert out["status"] == "CANCELLED"
    assert stopped.read_text() == "stopped"
    assert time.monotonic() - began < 10
