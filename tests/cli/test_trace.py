"""``execgraph trace`` shows the developer what a tool raised: type, message, traceback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_helpers import cli
from tests.support.cli_raising_tools import BROKEN


def test_trace_shows_what_a_tool_raised(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Compare RAG and long context; write report.md"}))
    tools = "tests.support.cli_raising_tools:raising_demo"
    run = cli("run", str(task), "--tools", tools, "--run-id", "x1", "--home", str(tmp_path))
    assert run.status is not None, run
    assert "tool bug: search_corpus raised RuntimeError" in run.out and BROKEN not in run.out
    trace = cli("trace", "x1", "--home", str(tmp_path))
    assert trace.code == 0, trace
    assert "tool.raised" in trace.out
    assert f"invoke: RuntimeError: {BROKEN}" in trace.out
    assert "Traceback (most recent call last)" in trace.out
    assert "in search_corpus" in trace.out and "raise RuntimeError(BROKEN)" in trace.out


def test_execgraph_log_prints_why_a_tool_failed_while_the_run_goes_on(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Compare RAG and long context; write report.md"}))
    tools = "tests.support.cli_raising_tools:raising_demo"
    args = ("run", str(task), "--tools", tools, "--home", str(tmp_path))
    quiet = cli(*args, "--run-id", "q1")
    assert "execgraph.executor" not in quiet.err  # a library logs nowhere unless asked
    assert quiet.err.count("Traceback") == 1  # the bug that stopped the run, shown once
    loud = cli(*args, "--run-id", "l1", EXECGRAPH_LOG="WARNING")
    assert "WARNING execgraph.executor" in loud.err and BROKEN in loud.err
