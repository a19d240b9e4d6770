"""Cancel one call: its tool is told to stop, it ends with its truthful outcome, the model
is told, and the run goes on (the run itself is not cancelled)."""

from __future__ import annotations

import http.server
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from execgraph import build_graph, request_call_cancel
from execgraph.demo.build import demo_task
from execgraph.demo.register import register_demo
from execgraph.engines.embedded import EmbeddedRuns
from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import RunSpec
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import HttpAdapter, ProcessAdapter
from tests.support.cli_helpers import cli_process

pytestmark = pytest.mark.integration

GUARD_S = 60.0  # a broken cancel fails the test instead of hanging it (not a timing claim)


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _finish(text: str) -> AIMessage:
    return _call("finish", {"output": text}, "fin-1")


def _started(store: ExecutionStore, run_id: str) -> str:
    """The call id of the run's running call (its record written, not committed)."""
    end = time.monotonic() + GUARD_S
    while time.monotonic() < end:
        running = store.pending(run_id)
        if running:
            return running[0].call_id
        time.sleep(0.05)
    raise AssertionError("the call never started")


def _drive(app: Any, run_id: str) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}
    config = {"configurable": {"thread_id": run_id}}
    runner = threading.Thread(
        target=lambda: out.update(app.invoke({"task": {"goal": "do it"}}, config)), daemon=True
    )
    runner.start()
    return runner, out


def _observed(model: ScriptedChatModel, call_id: str) -> ToolMessage:
    """The tool message the model was shown for ``call_id`` on its last turn."""
    seen = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
    return next(m for m in seen if m.tool_call_id == call_id)


def test_a_cancelled_process_call_ends_cancelled_and_the_run_goes_on(tmp_path: Path) -> None:
    """A slow child process is cancelled from another process (the command line): its
    tree is killed, the call is ``cancelled`` (a read: nothing happened), the model is
    told, and the run finishes on."""
    sleeper = {"program": "python", "args": ["-c", "import time; time.sleep(600)"]}
    model = ScriptedChatModel([_call("run_process", sleeper, "slow-1"), _finish("gave up on it")])
    tools = [ProcessAdapter({"python": sys.executable}, effect="read", default_timeout_s=600)]
    app = build_graph("react", model=model, tools=tools, home=tmp_path)
    store = SqliteExecutionStore(tmp_path / "exec.db")
    runner, out = _drive(app, "r1")
    call_id = _started(app.run_store, "r1")
    began = time.monotonic()
    cancelled = cli_process("cancel", "r1", "--call", call_id, "--home", str(tmp_path))
    assert cancelled.code == 0, cancelled.out + cancelled.err
    assert "goes on" in cancelled.out
    runner.join(GUARD_S)
    assert not runner.is_alive() and time.monotonic() - began < GUARD_S
    assert out["status"] not in ("CANCELLED", "WAITING")  # the run was not cancelled
    result = out["results"][call_id]
    assert result["outcome"] == "cancelled" and result["side_effect"]["committed"] is False
    seen = _observed(model, "slow-1")
    assert seen.status == "error" and "CANCELLED" in str(seen.content)
    model.assert_consumed()  # the model was asked again after the cancel
    kinds = [e.type for e in store.events("r1", call_id=call_id)]
    assert EventType.TOOL_CANCELLING in kinds
    assert not store.has_event("r1", EventType.RUN_CANCEL_REQUESTED)
    again = cli_process("cancel", "r1", "--call", call_id, "--home", str(tmp_path))
    assert again.code != 0 and "already ended" in again.err + again.out


class _Hanging(http.server.BaseHTTPRequestHandler):
    """Reads a POST's body, then never answers (the write may have happened)."""

    received: threading.Event

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.set()
        time.sleep(GUARD_S)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hanging() -> Iterator[tuple[str, threading.Event]]:
    received = threading.Event()
    handler = type("Handler", (_Hanging,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/orders", received
    finally:
        server.shutdown()
        server.server_close()


def test_a_cancelled_write_whose_request_was_sent_is_unknown(
    tmp_path: Path, hanging: tuple[str, threading.Event]
) -> None:
    """An HTTP write the server received but never answered, cancelled from another
    thread by its call id: the effect may have happened, so the call is ``unknown``."""
    url, received = hanging
    post = {"url": url, "json_body": {"sku": "x"}}
    model = ScriptedChatModel([_call("http_post", post, "post-1"), _finish("unsure")])
    tools = [HttpAdapter(["127.0.0.1"], allow_private=True, default_timeout_s=600)]
    app = build_graph("react", model=model, tools=tools, home=tmp_path)
    runner, out = _drive(app, "r2")
    call_id = _started(app.run_store, "r2")
    assert received.wait(GUARD_S)
    assert request_call_cancel(app.run_store, "r2", call_id, "taking too long")
    runner.join(GUARD_S)
    assert not runner.is_alive()
    result = out["results"][call_id]
    assert result["outcome"] == "unknown" and result["side_effect"]["committed"] is None
    assert "UNKNOWN" in str(_observed(model, "post-1").content)
    assert out["status"] != "CANCELLED"


def test_a_call_waiting_for_approval_is_refused_by_a_call_cancel(tmp_path: Path) -> None:
    """Cancelling a call that waits for a person refuses it (it never ran) and the run
    goes on from there; a call id the run never had is refused with a clear error."""
    runs = EmbeddedRuns(tmp_path, graphs=register_demo(Graphs()))
    view = runs.start(RunSpec("demo-1", demo_task()))
    assert view.waiting
    [pending] = view.interrupts
    call_id = pending["value"]["call_id"]
    with pytest.raises(UsageError, match=r"no call .* running"):
        runs.cancel("demo-1", call_id="never-made")
    after = runs.cancel("demo-1", "not now", call_id=call_id)
    assert after.status != "CANCELLED" and after.values is not None
    assert call_id not in {i["value"].get("call_id") for i in after.interrupts}
    result = after.values["results"][call_id]
    assert result["status"] == "DENIED" and "cancelled: not now" in result["error"]["message"]
    assert result["side_effect"]["attempted"] is False
