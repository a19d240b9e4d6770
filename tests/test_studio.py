"""``langgraph.json`` under a real ``langgraph dev`` server, driven through ``langgraph_sdk``.

The server runs as a subprocess in its own process group, in a temporary working directory
(its dev persistence, ``.langgraph_api/``, lands there) with ``$EXECGRAPH_HOME`` in a
temporary directory, and with everything that phones home switched off: there is no
network here but the loopback interface.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from execgraph.demo.build import demo_task
from execgraph.state.store.sqlite import SqliteExecutionStore

REPO = Path(__file__).resolve().parents[1]
GRAPHS = {"workflow", "react", "plan_execute", "hybrid", "executor"}
_STARTUP_S = 120.0  # an upper bound for slow machines, not a performance claim
_STOP_S = 20.0
_URL = re.compile(r"API: \S*?(http://127\.0\.0\.1:\d+)")

# Anything that would make the server or the CLI talk to LangSmith, a license beacon, an
# OTLP collector or PyPI: dropped from the inherited environment, then switched off below.
_DROP = re.compile(
    r"^(LANGSMITH_|LANGCHAIN_|LANGGRAPH_|OTEL_|LSD_|DD_|MOUNT_PREFIX$|N_JOBS_PER_WORKER$)"
)
_QUIET = {
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGCHAIN_TRACING": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # langgraph_cli.analytics: no usage POST
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # langgraph_api.cli: no PyPI version lookup
    "OTEL_ENABLED": "false",  # langgraph_api.config: no OTLP exporter
}


@dataclass(frozen=True)
class Server:
    """A running ``langgraph dev``: its base URL, its EXECGRAPH_HOME, its log."""

    url: str
    home: Path
    log: Path

    def client(self) -> SyncLangGraphClient:
        return get_sync_client(url=self.url, api_key=None, timeout=120.0)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(log: Path, lines: int = 60) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    return "\n".join(re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()[-lines:])


def _wait_ready(proc: subprocess.Popen[bytes], log: Path) -> str:
    """The server's base URL once ``GET /ok`` answers; fails on exit or after the bound."""
    deadline = time.monotonic() + _STARTUP_S
    url: str | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{_tail(log)}")
        if url is None:
            # The CLI moves to another port if ours was taken meanwhile; the banner says where.
            found = _URL.search(re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace")))
            url = found.group(1) if found else None
        if url is not None:
            try:
                if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
        time.sleep(0.2)
    pytest.fail(f"langgraph dev did not answer /ok within {_STARTUP_S:g}s:\n{_tail(log)}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server's whole process group, then kill it if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=_STOP_S)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` over the repository's ``langgraph.json`` on a free loopback port."""
    home = tmp_path_factory.mktemp("execgraph-home")
    cwd = tmp_path_factory.mktemp("langgraph-dev")
    log = cwd / "server.log"
    env = {k: v for k, v in os.environ.items() if not _DROP.match(k)}
    env.update(_QUIET)
    env["EXECGRAPH_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    argv = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--config",
        str(REPO / "langgraph.json"),
        "--port",
        str(_free_port()),
        "--host",
        "127.0.0.1",
        "--no-browser",
        "--no-reload",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so teardown reaches every child
        )
    try:
        yield Server(url=_wait_ready(proc, log), home=home, log=log)
    finally:
        _stop(proc)


def _interrupts(client: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any]]:
    state: Any = client.threads.get_state(thread_id)
    return list(state["interrupts"])


def test_server_lists_the_five_graphs(server: Server) -> None:
    client = server.client()
    assistants = client.assistants.search(limit=100)
    assert {a["graph_id"] for a in assistants} == GRAPHS
    for graph_id in GRAPHS:
        assert client.assistants.get_graph(graph_id)["nodes"]  # each one draws, as Studio does


@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_demo_pauses_for_publish_approval_and_completes(server: Server, arch: str) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]
    published = server.home / "workspace" / "published"
    shutil.rmtree(published, ignore_errors=True)  # the workspace is shared by the module's runs

    paused: Any = client.runs.wait(thread_id, arch, input={"task": demo_task()})
    assert paused.get("status") != "COMPLETED"
    assert client.threads.get(thread_id)["status"] == "interrupted"
    [pause] = _interrupts(client, thread_id)
    # the executor's per-call ApprovalRequest, or hybrid's fixed approval node's batch of them
    asked = pause["value"].get("calls", [pause["value"]])
    assert [call["tool"] for call in asked] == ["publish_report"]
    assert pause["value"]["run_id"] == thread_id  # run_id is the LangGraph thread id
    assert (published.parent / "report.md").is_file()  # the draft is written
    assert not published.exists()  # nothing published before the approval

    final: Any = client.runs.wait(
        thread_id,
        arch,
        command={"resume": {pause["id"]: {"action": "approve"}}},
    )
    assert final["status"] == "COMPLETED", final.get("error")
    assert client.threads.get(thread_id)["status"] == "idle"
    assert _interrupts(client, thread_id) == []
    state: Any = client.threads.get_state(thread_id)
    assert state["values"]["status"] == "COMPLETED"
    assert (published / "report.md").is_file()


def test_fixed_workflow_ends_partial_without_a_pause(server: Server) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]

    out: Any = client.runs.wait(thread_id, "workflow", input={"task": demo_task()})

    assert out["status"] == "PARTIAL"
    assert client.threads.get(thread_id)["status"] == "idle"
    assert _interrupts(client, thread_id) == []


def test_executor_graph_commits_one_search(server: Server) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]
    request: dict[str, Any] = {
        "run_id": "studio-exec",
        "turn_id": "turn-1",
        "call_id": "call-1",
        "tool": {"name": "search_corpus"},
        "arguments": {"query": "retrieval augmented generation"},
        "workspace": {"id": "ws", "root": str(server.home / "workspace")},
    }

    out: Any = client.runs.wait(thread_id, "executor", input={"request": request})

    result = out["results"]["call-1"]
    assert result["tool_name"] == "search_corpus"
    assert result["outcome"] == "succeeded" and result["status"] == "OK"
    assert result["data"]["hits"], result
    store = SqliteExecutionStore(server.home / "exec.db")
    try:
        record = store.get("studio-exec:call-1")
        assert record is not None and record.state == "committed"
    finally:
        store.close()
