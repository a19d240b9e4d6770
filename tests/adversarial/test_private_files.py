"""A home is its user's alone: the directory 0700, its databases (with their WAL and
shared-memory files), records and key 0600, however the home was made.

Made by ``build_graph(home=...)`` with ``$EXECGRAPH_APPROVAL_SECRET`` set (so no key file
makes the home first), by the command line, and by ``execgraph worker --home``; each
checked under a umask that would leave them readable by everyone (022).
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from execgraph import build_graph
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.cli_helpers import cli
from tests.support.cli_helpers import cli_process as cli_proc
from tests.support.temporal_cli import cli_worker, temporal_flags

pytestmark = pytest.mark.timeout(300)


@tool_spec(effect="read")
def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _private(home: Path) -> dict[str, str]:
    """What of ``home`` others could read (its workspaces aside: a tool's files there are
    the tool's business)."""
    loose = {}
    for path in home.rglob("*"):
        if not path.relative_to(home).parts[0].startswith("workspace") and _mode(path) & 0o077:
            loose[str(path.relative_to(home))] = oct(_mode(path))
    return loose


def test_build_graph_with_the_secret_in_the_environment_makes_a_private_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", "from-the-environment")
    home = tmp_path / "home"
    model = ScriptedChatModel([
        AIMessage("", tool_calls=[{"name": "echo", "args": {"text": "hi"}, "id": "e"}]),
        AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "hi"}, "id": "f"}]),
    ])  # fmt: skip
    graph = build_graph("react", model=model, tools=[echo], home=home)
    graph.invoke({"task": {"goal": "say hi"}}, {"configurable": {"thread_id": "p1"}})
    names = {p.name for p in home.iterdir()}
    assert {"exec.db", "checkpoints.db"} <= names
    assert any(name.endswith("-wal") for name in names)  # checked while they are open
    assert _mode(home) == 0o700
    assert _private(home) == {}


def test_the_command_line_makes_a_private_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "cli-home"
    done = cli("demo", "--run-id", "d1", "--auto-approve", "--home", str(home),
               EXECGRAPH_APPROVAL_SECRET="from-the-environment")  # fmt: skip
    assert done.code == 0, done
    assert (home / "runs" / "d1.json").exists()
    assert _mode(home) == 0o700
    assert _private(home) == {}


def test_a_worker_makes_a_private_home(temporal_address: str, tmp_path: Path) -> None:
    home = tmp_path / "worker-home"
    queue = f"private-{uuid.uuid4().hex[:6]}"
    with cli_worker(temporal_address, queue, home) as worker:
        assert _mode(home) == 0o700  # from the start, before any run
        done = cli_proc("demo", "--run-id", "w1", "--auto-approve",
                        *temporal_flags(temporal_address, queue), home=worker.home)  # fmt: skip
        assert done.code == 0, done
        assert (home / "exec.db").exists() and (home / "approval.key").exists()
        assert _private(home) == {}
