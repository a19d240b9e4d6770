"""Tools that time out, hang or ignore a cancel, as ordinary Python tools do.

On Python 3.11 ``concurrent.futures.TimeoutError`` is the builtin ``TimeoutError`` (and so
is ``asyncio.TimeoutError``; ``socket.timeout`` subclasses it). A tool that *raises* one
has ended — its response was lost — and must not be mistaken for "the wait ran out": that
mistake re-polled the finished future forever (a read never returned; a write grew one
process to 24 GB). Each test carries its own timeout, so a regression fails, not hangs.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.nodes.cancel import request_cancel
from execgraph.nodes.executor.recovery.abandoned import still_running
from execgraph.nodes.executor.stages.invoke import CANCEL_GRACE_S
from execgraph.tools import InvokeContext, tool_spec
from tests.support.executor import Counter, config, make_deps, make_executor, request

pytestmark = pytest.mark.timeout(60)


def _run(tmp_path: Path, tools: list[Any], name: str, **kw: Any) -> tuple[dict[str, Any], Any]:
    deps = make_deps(tmp_path, tools, **kw)
    out = make_executor(deps).invoke(
        {"request": request(name, {}, root=tmp_path, call_id="c1")}, config()
    )
    return out["results"]["c1"], deps


@pytest.mark.parametrize(
    "timeout", [TimeoutError, asyncio.TimeoutError, socket.timeout], ids=lambda t: t.__name__
)
def test_a_read_that_raises_timeout_error_is_a_retryable_failure(
    tmp_path: Path, timeout: type[BaseException]
) -> None:
    @tool_spec(effect="read")
    def fetch() -> str:
        """Fetch a page whose server never answers."""
        raise timeout("read timed out")

    result, _ = _run(tmp_path, [fetch], "fetch")
    assert result["outcome"] == "failed"
    assert result["status"] == "RETRYABLE_ERROR"
    assert result["error"]["retryable"] is True
    assert "timed out" in result["error"]["message"]


def test_a_write_that_raises_timeout_error_after_acting_is_unknown_not_retried(
    tmp_path: Path,
) -> None:
    sent = Counter()

    @tool_spec(effect="write")
    def send(ctx: InvokeContext) -> str:
        """Send a payment; the gateway's response is lost."""
        sent.add(ctx.call_id)
        raise TimeoutError("gateway timed out")

    result, deps = _run(tmp_path, [send], "send")
    assert result["outcome"] == "unknown"
    assert result["side_effect"] == {
        "attempted": True,
        "committed": None,
        "summary": "response lost",
    }
    assert result["error"]["type"] == "ResponseLostError"
    again = make_executor(deps).invoke(
        {"request": request("send", {}, root=tmp_path, call_id="c2")}, config("t-2")
    )
    assert again["results"]["c2"]["error"]["type"] == "UnresolvedOutcome"  # never blindly redone
    assert len(sent) == 1


def test_an_async_tool_that_raises_timeout_error_ends_at_once(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    async def lookup() -> str:
        """Look something up over a slow link."""
        await asyncio.wait_for(asyncio.sleep(10), timeout=0.01)
        return "never"

    started = time.monotonic()
    result, _ = _run(tmp_path, [lookup], "lookup")
    assert result["status"] == "RETRYABLE_ERROR"
    assert time.monotonic() - started < 10  # it ended with the tool, not at any deadline


def test_a_tool_that_ignores_the_deadline_is_reported_as_timed_out(tmp_path: Path) -> None:
    release = threading.Event()

    @tool_spec(effect="read", timeout_s=0.2)
    def stubborn() -> str:
        """Ignore every signal for a while."""
        release.wait(5)
        return "late"

    try:
        result, _ = _run(tmp_path, [stubborn], "stubborn")
    finally:
        release.set()
    assert result["status"] == "RETRYABLE_ERROR"
    assert result["error"]["type"] == "DeadlineExceeded"


def test_a_cancel_the_tool_ignores_is_reported_as_a_cancel(tmp_path: Path) -> None:
    """A person's cancel is a cancel, not "the deadline passed"; a read that ignored it
    changed nothing, a write that ignored it may have acted."""
    release = threading.Event()
    started = threading.Event()

    @tool_spec(effect="read")
    def crawl() -> str:
        """Crawl, ignoring the cancel signal."""
        started.set()
        release.wait(10)
        return "done"

    @tool_spec(effect="write")
    def upload() -> str:
        """Upload, ignoring the cancel signal."""
        started.set()
        release.wait(10)
        return "done"

    deps = make_deps(tmp_path, [crawl, upload])
    results = {}
    try:
        for n, name in enumerate(("crawl", "upload")):
            started.clear()
            run_id = f"run-{n}"
            canceller = threading.Thread(
                target=lambda rid=run_id: started.wait(5) and request_cancel(deps.store, rid)
            )
            canceller.start()
            out = make_executor(deps).invoke(
                {"request": request(name, {}, root=tmp_path, call_id=name, run_id=run_id)},
                config(run_id),
            )
            canceller.join()
            results[name] = out["results"][name]
    finally:
        release.set()
    assert results["crawl"]["outcome"] == "cancelled"
    assert results["crawl"]["status"] == "CANCELLED"
    assert results["crawl"]["error"]["type"] == "ToolCancelled"
    assert results["upload"]["outcome"] == "unknown"
    assert results["upload"]["error"]["type"] == "ToolCancelled"
    assert results["upload"]["side_effect"]["committed"] is None


def test_an_abandoned_write_keeps_its_lock_until_its_thread_ends(tmp_path: Path) -> None:
    """Two writes under one lock key never overlap, even when the first outlived its
    deadline and was reported timed out: its lock is released when it really ends."""
    spans: dict[str, tuple[float, float]] = {}

    def writing(name: str, seconds: float) -> None:
        begin = time.monotonic()
        time.sleep(seconds)  # ignores every signal
        spans[name] = (begin, time.monotonic())

    @tool_spec(effect="write", locks=["file:{path}"], timeout_s=0.3)
    def save_slowly(path: str) -> str:
        """Save, outliving the deadline."""
        writing("first", CANCEL_GRACE_S + 1.5)
        return "saved"

    @tool_spec(effect="write", locks=["file:{path}"], timeout_s=30)
    def save(path: str) -> str:
        """Save the same file."""
        writing("second", 0.05)
        return "saved"

    deps = make_deps(tmp_path, [save_slowly, save])
    app = make_executor(deps)

    def run(tool: str, call_id: str) -> dict[str, Any]:
        req = request(tool, {"path": "a.txt"}, root=tmp_path, call_id=call_id)
        return app.invoke({"request": req}, config(call_id))["results"][call_id]

    first = run("save_slowly", "w1")
    assert first["outcome"] == "unknown" and "deadline passed" in first["error"]["message"]
    assert still_running() == 1
    assert run("save", "w2")["outcome"] == "succeeded"
    assert spans["second"][0] >= spans["first"][1]  # it waited for the first to end
    types = {e.type for e in deps.store.events("run-1", call_id="w1")}
    assert {"tool.cancelling", "tool.abandoned", "tool.ended_late"} <= types
    assert still_running() == 0
