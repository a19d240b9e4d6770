"""Runs sharing a workspace exclude each other on one resource.

A tool's lock (``locks=["file:{path}"]``) names the file where it is — the workspace's
root and the path — not the run that writes it: two runs on one workspace, started at
the same instant on two threads and writing one file, hold the lock one after the
other, on SQLite and on PostgreSQL. Two runs in different workspaces do not wait for
each other.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from execgraph import build_graph, tool_spec
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(120)

HOLD_S = 0.4


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "sqlite":
        return {"home": tmp_path}
    return {"database": request.getfixturevalue("postgres_database"), "home": tmp_path}


def _writer(spans: list[tuple[float, float]]) -> Any:
    @tool_spec(name="append_line", effect="write", locks=["file:{path}"], path_args=["path"])
    def append_line(path: str, line: str) -> str:
        """Append a line to a file of the workspace (slowly: read, wait, write)."""
        start = time.monotonic()
        time.sleep(HOLD_S)
        spans.append((start, time.monotonic()))
        return "appended"

    return append_line


def _append_then_finish(messages: list[Any]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        call = {"name": "finish", "args": {"output": "appended"}, "id": "f"}
    else:
        call = {"name": "append_line", "args": {"path": "notes.txt", "line": "x"}, "id": "w"}
    return AIMessage("", tool_calls=[call])


def _two_runs_at_once(apps: list[Any]) -> list[dict[str, Any]]:
    """Invoke each app on a thread of its own, all released at one instant."""
    barrier = threading.Barrier(len(apps))
    outs: list[dict[str, Any]] = [{} for _ in apps]

    def run(n: int) -> None:
        barrier.wait()
        cfg = {"configurable": {"thread_id": f"run-{n}"}}
        outs[n] = apps[n].invoke({"task": {"goal": "append"}}, cfg)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(apps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return outs


def _overlap(spans: list[tuple[float, float]]) -> float:
    (_, first_end), (second_start, second_end) = sorted(spans)
    return min(first_end, second_end) - second_start


def test_two_runs_on_one_workspace_write_one_file_one_after_the_other(
    where: dict[str, Any],
) -> None:
    spans: list[tuple[float, float]] = []
    tool = _writer(spans)
    apps = [
        build_graph(
            "react", model=ScriptedChatModel([_append_then_finish] * 4), tools=[tool], **where
        )
        for _ in range(2)
    ]
    outs = _two_runs_at_once(apps)
    assert [o.get("status") for o in outs] == ["COMPLETED", "COMPLETED"], outs
    assert len(spans) == 2
    assert _overlap(spans) <= 0, spans  # serialized: the second began after the first ended


def test_runs_in_different_workspaces_do_not_wait_for_each_other(tmp_path: Path) -> None:
    spans: list[tuple[float, float]] = []
    tool = _writer(spans)
    apps = [
        build_graph(
            "react",
            model=ScriptedChatModel([_append_then_finish] * 4),
            tools=[tool],
            home=tmp_path,
            workspace=tmp_path / f"ws-{n}",
        )
        for n in range(2)
    ]
    outs = _two_runs_at_once(apps)
    assert [o.get("status") for o in outs] == ["COMPLETED", "COMPLETED"], outs
    assert _overlap(spans) > 0, spans  # both held their own file's lock at once
