"""``langgraph.json`` under a real ``langgraph dev`` server, driven through ``langgraph_sdk``.

The server runs as a subprocess in its own process group, in a temporary working directory
(its dev persistence, ``.langgraph_api/``, lands there) with ``$EXECGRAPH_HOME`` in a
temporary directory, and with everything that phones home switched off: there is no
network here but the loopback interface.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from execgraph.demo.build import demo_task
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

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


@contextmanager
def _launch(config: Path, cwd: Path, home: Path, env_extra: dict[str, str]) -> Iterator[Server]:
    """``langgraph dev`` over ``config``, run in ``cwd``, on a free loopback port."""
    log = cwd / "server.log"
    env = {k: v for k, v in os.environ.items() if not _DROP.match(k)}
    env.update(_QUIET)
    env.update(env_extra)
    env["EXECGRAPH_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    argv = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--config",
        str(config),
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` over the repository's ``langgraph.json`` (the demo)."""
    home = tmp_path_factory.mktemp("execgraph-home")
    cwd = tmp_path_factory.mktemp("langgraph-dev")
    with _launch(REPO / "langgraph.json", cwd, home, {}) as running:
        yield running


def _interrupts(client: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any]]:
    state: Any = client.threads.get_state(thread_id)
    return list(state["interrupts"])


def test_server_lists_the_five_graphs(server: Server) -> None:
    client = server.client()
    assistants = client.assistants.search(limit=100)
    assert {a["graph_id"] for a in assistants} == GRAPHS
    for graph_id in GRAPHS:
        assert client.assistants.get_graph(graph_id)["nodes"]  # each one draws, as Studio does


def _schemas(client: SyncLangGraphClient) -> dict[str, dict[str, Any]]:
    """Each graph's schemas as the server serves them to Studio, by graph id."""
    assistants = client.assistants.search(limit=100)
    return {
        a["graph_id"]: dict(client.assistants.get_schemas(a["assistant_id"])) for a in assistants
    }


def _assert_a_person_can_fill(schema: dict[str, Any] | None) -> None:
    """A run graph's input: a task (a goal, optional checks and budgets) or messages."""
    assert schema is not None
    assert set(schema["properties"]) == {"task", "messages"}
    task = schema["$defs"]["TaskInput"]
    assert task["required"] == ["goal"]
    assert {"goal", "success_checks", "budgets", "stop_conditions"} <= set(task["properties"])
    assert schema["properties"]["messages"]["type"] == "array"


def test_every_graph_serves_an_input_schema(server: Server) -> None:
    schemas = _schemas(server.client())
    assert set(schemas) == GRAPHS
    for arch in GRAPHS - {"executor"}:
        _assert_a_person_can_fill(schemas[arch]["input_schema"])
    executor = schemas["executor"]["input_schema"]
    assert executor is not None and set(executor["properties"]) == {"request", "batch"}


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


# --------------------------------------------------------------------------- your own tools
# A user's project: their tools module, their own graph module, their langgraph.json (which
# serves execgraph.studio over their tools through EXECGRAPH_TOOLS / EXECGRAPH_MODEL), and
# ChatOpenAI configured by OPENAI_BASE_URL / OPENAI_API_KEY, here the scripted server.

_USER_TOOLS = """
import os
from pathlib import Path

from langchain_core.tools import tool


@tool
def lookup_order(order_id: str) -> str:
    \"\"\"Look up an order's status.\"\"\"
    return f"order {order_id}: delivered, 42.00 EUR"


lookup_order.metadata = {"effect": "read"}


@tool
def refund_order(order_id: str, amount: float) -> str:
    \"\"\"Refund an order.\"\"\"
    with Path(os.environ["REFUNDS_FILE"]).open("a") as out:
        out.write(f"{order_id} {amount}\\n")
    return "refunded"


tools = [lookup_order, refund_order]  # refund_order declares nothing: irreversible
"""

_USER_GRAPH = """
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from my_tools import tools

graph = build_graph(
    "react", model=ChatOpenAI(model="gpt-4o-mini", max_retries=0), tools=tools, checkpointer=False
)
"""

_USER_CONFIG = {
    "dependencies": ["."],
    "graphs": {"shop": "./agent.py:graph", "react": "execgraph.studio:react"},
    "env": {"EXECGRAPH_TOOLS": "my_tools:tools", "EXECGRAPH_MODEL": "openai:gpt-4o-mini"},
}


@dataclass(frozen=True)
class UserServer:
    """``langgraph dev`` over a user's project, its scripted model, where refunds land."""

    server: Server
    model: OpenAIServer
    refunds: Path


@pytest.fixture(scope="module")
def user_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserServer]:
    home = tmp_path_factory.mktemp("user-home")
    project = tmp_path_factory.mktemp("user-project")
    (project / "my_tools.py").write_text(_USER_TOOLS)
    (project / "agent.py").write_text(_USER_GRAPH)
    (project / "langgraph.json").write_text(json.dumps(_USER_CONFIG))
    refunds = home / "refunds.txt"
    with OpenAIServer() as model:
        env = {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-test-key",
            "REFUNDS_FILE": str(refunds),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        with _launch(project / "langgraph.json", project, home, env) as running:
            yield UserServer(server=running, model=model, refunds=refunds)
        assert model.unexpected == []


def _refund_task() -> dict[str, Any]:
    checks = [{"kind": "tool_succeeded", "target": "refund_order"}]
    return {"goal": "Refund order A-1", "success_checks": checks, "budgets": {"model_calls": 5}}


def test_studio_serves_your_tools_and_their_input_schema(user_server: UserServer) -> None:
    client = user_server.server.client()
    schemas = _schemas(client)
    assert set(schemas) == {"shop", "react"}
    for graph_id in schemas:
        _assert_a_person_can_fill(schemas[graph_id]["input_schema"])
    drawn = {node["id"] for node in client.assistants.get_graph("react")["nodes"]}
    assert {"admit", "decide", "executor", "verify"} <= drawn


def test_a_paused_call_of_your_tool_is_approved_from_the_sdk(user_server: UserServer) -> None:
    user_server.model.add(
        tool_calls(tool_call("refund_order", {"order_id": "A-1", "amount": 42.0})),
        tool_calls(tool_call("finish", {"output": "Refunded A-1."})),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]

    paused: Any = client.runs.wait(thread_id, "react", input={"task": _refund_task()})

    assert paused.get("status") == "WAITING"
    assert client.threads.get(thread_id)["status"] == "interrupted"
    [pause] = _interrupts(client, thread_id)
    assert pause["value"]["tool"] == "refund_order"
    assert not user_server.refunds.exists()  # nothing refunded before the approval

    run = client.runs.create(
        thread_id, "react", command={"resume": {pause["id"]: {"action": "approve"}}}
    )
    final: Any = client.runs.join(thread_id, run["run_id"])

    assert final["status"] == "COMPLETED", final.get("error")
    assert final["output"] == "Refunded A-1."
    assert user_server.refunds.read_text() == "A-1 42.0\n"
    assert client.threads.get(thread_id)["status"] == "idle"


def test_your_own_graph_module_runs_your_langchain_tool(user_server: UserServer) -> None:
    user_server.model.add(
        tool_calls(tool_call("lookup_order", {"order_id": "B-7"})),
        tool_calls(tool_call("finish", {"output": "B-7 was delivered."})),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]
    checks = [{"kind": "tool_succeeded", "target": "lookup_order"}]
    task = {"goal": "Where is order B-7?", "success_checks": checks}

    out: Any = client.runs.wait(thread_id, "shop", input={"task": task})

    assert out["status"] == "COMPLETED", out.get("error")
    [result] = [r for r in out["results"].values() if r["tool_name"] == "lookup_order"]
    assert result["data"] == "order B-7: delivered, 42.00 EUR"


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"EXECGRAPH_TOOLS": "my_tools"}, "must look like 'package.module:attribute'"),
        ({"EXECGRAPH_TOOLS": "my_tools:tools"}, "set EXECGRAPH_MODEL too"),
        ({"EXECGRAPH_TOOLS": "no_such_module:tools", "EXECGRAPH_MODEL": "openai:m"}, "import"),
        ({"EXECGRAPH_TOOLS": "my_tools:refund", "EXECGRAPH_MODEL": "openai:m"}, "has no"),
        (
            {"EXECGRAPH_TOOLS": "my_tools:Path", "EXECGRAPH_MODEL": "openai:m"},
            "must name a non-empty list of tools (or one tool), not a type",
        ),
    ],
)
def test_a_misconfigured_studio_says_what_to_fix(
    tmp_path: Path, env: dict[str, str], says: str
) -> None:
    (tmp_path / "my_tools.py").write_text(_USER_TOOLS)
    child = {k: v for k, v in os.environ.items() if not k.startswith("EXECGRAPH_")}
    child.update(env, EXECGRAPH_HOME=str(tmp_path / "home"))
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(tmp_path)]))
    done = subprocess.run(
        [sys.executable, "-c", "import execgraph.studio"],
        cwd=tmp_path,
        env=child,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("execgraph.state.errors.UsageError:"), last
    assert says in last, last
