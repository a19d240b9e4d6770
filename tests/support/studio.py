"""``langgraph dev`` as the Studio tests run it, and what they ask it through ``langgraph_sdk``.

The server runs as a subprocess in its own process group, in a temporary working directory
(its dev persistence, ``.langgraph_api/``, lands there) with ``$EXECGRAPH_HOME`` in a
temporary directory, and with everything that phones home switched off: there is no
network here but the loopback interface.
"""

from __future__ import annotations

import os
import re
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

__all__ = ["REPO", "Server", "assert_a_person_can_fill", "interrupts", "launch", "served_schemas"]

REPO = Path(__file__).resolve().parents[2]
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
def launch(config: Path, cwd: Path, home: Path, env_extra: dict[str, str]) -> Iterator[Server]:
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


def interrupts(client: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any]]:
    state: Any = client.threads.get_state(thread_id)
    return list(state["interrupts"])


def served_schemas(client: SyncLangGraphClient) -> dict[str, dict[str, Any]]:
    """Each graph's schemas as the server serves them to Studio, by graph id."""
    assistants = client.assistants.search(limit=100)
    return {
        a["graph_id"]: dict(client.assistants.get_schemas(a["assistant_id"])) for a in assistants
    }


def assert_a_person_can_fill(schema: dict[str, Any] | None) -> None:
    """A run graph's input: a task (a goal, optional checks and budgets) or messages."""
    assert schema is not None
    assert set(schema["properties"]) == {"task", "messages"}
    task = schema["$defs"]["TaskInput"]
    assert task["required"] == ["goal"]
    assert {"goal", "success_checks", "budgets", "stop_conditions"} <= set(task["properties"])
    assert schema["properties"]["messages"]["type"] == "array"
