"""``@tool_spec(isolation="process")``: a tool a deadline or a cancel can really stop."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.nodes.cancel import request_cancel
from execgraph.nodes.executor.recovery.abandoned import still_running
from execgraph.state.errors import ToolDeclarationError
from execgraph.tools import InvokeContext, tool_spec
from tests.support import isolated_tools
from tests.support.executor import config, make_deps, make_executor, request

pytestmark = pytest.mark.timeout(90)

TOOLS = [
    isolated_tools.add,
    isolated_tools.hang,
    isolated_tools.wait_forever,
    isolated_tools.missing,
    isolated_tools.broken,
    isolated_tools.slow_timeout,
]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def run(tmp_path: Path) -> Any:
    deps = make_deps(tmp_path, TOOLS)
    app = make_executor(deps)

    def call(tool: str, args: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
        req = request(tool, args, root=tmp_path, call_id=call_id, run_id=call_id)
        return app.invoke({"request": req}, config(call_id))["results"][call_id]

    call.deps = deps  # type: ignore[attr-defined]
    return call


def test_an_isolated_tool_runs_in_another_process(run: Any) -> None:
    result = run("add", {"a": 2, "b": 3})
    assert result["outcome"] == "succeeded"
    assert result["data"]["sum"] == 5
    assert result["data"]["pid"] != os.getpid()


def test_a_hung_isolated_write_is_killed_at_its_deadline_and_frees_its_lock(
    run: Any, tmp_path: Path
) -> None:
    pidfile = tmp_path / "hang.pid"
    result = run("hang", {"pidfile": str(pidfile)})
    pid = int(pidfile.read_text())
    assert not _alive(pid)  # SIGTERM ignored, SIGKILL after the grace
    assert result["outcome"] == "unknown"  # a write stopped mid-way: its effect is unknown
    assert "deadline" in result["error"]["message"]
    assert still_running() == 0  # nothing left behind holding the lock
    again = run("hang", {"pidfile": str(pidfile)}, call_id="c2")
    assert again["error"]["type"] != "LockTimeout"


def test_a_cancel_kills_an_isolated_tool_and_is_reported_as_a_cancel(
    run: Any, tmp_path: Path
) -> None:
    pidfile = tmp_path / "wait.pid"

    def cancel_when_started() -> None:
        while not pidfile.exists():
            time.sleep(0.02)
        request_cancel(run.deps.store, "c1")

    canceller = threading.Thread(target=cancel_when_started)
    canceller.start()
    started = time.monotonic()
    result = run("wait_forever", {"pidfile": str(pidfile)})
    canceller.join()
    assert time.monotonic() - started < 30  # not the tool's 120 s, nor its 60 s timeout
    assert not _alive(int(pidfile.read_text()))
    assert result["outcome"] == "cancelled" and result["status"] == "CANCELLED"


def test_typed_errors_and_timeouts_keep_their_meaning_across_the_process(run: Any) -> None:
    missing = run("missing", {"name": "x"})
    assert missing["status"] == "NOT_FOUND" and missing["error"]["type"] == "TargetNotFound"
    timed_out = run("slow_timeout", {}, call_id="c2")
    assert timed_out["status"] == "RETRYABLE_ERROR"
    broken = run("broken", {}, call_id="c3")
    assert broken["error"]["type"] == "ToolRaised"
    assert "hunter2" not in str(broken)


def test_only_a_module_level_function_without_ctx_can_be_isolated() -> None:
    with pytest.raises(ToolDeclarationError, match="module-level function"):

        @tool_spec(isolation="process")
        def nested(x: int) -> int:
            """A function the child could not import."""
            return x

    with pytest.raises(ToolDeclarationError, match="ctx"):
        tool_spec(isolation="process")(_takes_ctx)
    with pytest.raises(ToolDeclarationError, match="isolation must be"):
        tool_spec(isolation="container")  # type: ignore[arg-type]


def _takes_ctx(ctx: InvokeContext, x: int) -> int:
    return x
