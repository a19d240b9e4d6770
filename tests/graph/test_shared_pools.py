"""Every executor in a process shares its thread pools: a second graph starts no threads."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.nodes.executor.threads.pools import shared_pool
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import PolicyEngine, ToolRegistry, tool_spec
from tests.support.executor import SECRET, config, request


def _executor(tmp_path: Path, seen: set[str]) -> Any:
    @tool_spec(effect="read")
    def where(i: int) -> str:
        """Say which thread ran the tool."""
        seen.add(threading.current_thread().name)
        return "here"

    deps = ExecutorDeps(
        registry=ToolRegistry([where]),
        policy=PolicyEngine(),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        approval_secret=SECRET,
    )
    assert deps.pool is shared_pool("tool") and deps.calls is shared_pool("call")
    return build_executor(deps, checkpointer=InMemorySaver())


def _pool_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith(("tool", "call"))}


def test_a_second_graph_runs_its_tools_on_the_warm_threads(tmp_path: Path) -> None:
    first: set[str] = set()
    _executor(tmp_path / "a", first).invoke(
        {"request": request("where", {"i": 0}, root=tmp_path)}, config("a")
    )
    before = _pool_threads()
    second: set[str] = set()
    _executor(tmp_path / "b", second).invoke(
        {"request": request("where", {"i": 1}, root=tmp_path)}, config("b")
    )
    assert first and second and second <= before  # a thread that was already running
    assert not _pool_threads() - before  # no pool thread was started for the second graph
    assert all(name.startswith("tool") for name in first | second)
