"""Helpers for executor tests: counted tools (fakes, not mocks) and request builders."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import PolicyEngine, ToolRegistry, ToolSpec

SECRET = b"test-approval-secret"


class Counter:
    """Thread-safe record of the side effects a tool really performed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.effects: list[Any] = []

    def add(self, item: Any) -> None:
        with self._lock:
            self.effects.append(item)

    def __len__(self) -> int:
        with self._lock:
            return len(self.effects)


def make_deps(
    tmp_path: Path, tools: Iterable[ToolSpec], policy: PolicyEngine | None = None, **kw: Any
) -> ExecutorDeps:
    """Executor dependencies over a real SQLite store in ``tmp_path``."""
    return ExecutorDeps(
        registry=ToolRegistry(tools),
        policy=policy or PolicyEngine(),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        approval_secret=SECRET,
        **kw,
    )


def make_executor(deps: ExecutorDeps) -> Any:
    """The executor subgraph compiled alone with an in-memory checkpointer."""
    return build_executor(deps, checkpointer=InMemorySaver())


def request(
    tool: str,
    arguments: dict[str, Any],
    *,
    root: Path,
    call_id: str = "call-1",
    run_id: str = "run-1",
    **extra: Any,
) -> dict[str, Any]:
    """A ToolExecutionRequest dict as a caller would send it."""
    return {
        "run_id": run_id,
        "turn_id": "turn-1",
        "call_id": call_id,
        "tool": {"name": tool},
        "arguments": arguments,
        "workspace": {"id": "ws", "root": str(root)},
        **extra,
    }


def config(thread_id: str = "t-1") -> dict[str, Any]:
    """A LangGraph run config for one thread."""
    return {"configurable": {"thread_id": thread_id}}
