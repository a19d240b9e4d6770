"""The executor's shape is part of its contract: one node, one durability boundary."""

from __future__ import annotations

from pathlib import Path

from tests.support.executor import make_deps, make_executor
from tests.support.snapshots import assert_snapshot


def test_executor_mermaid_snapshot(tmp_path: Path) -> None:
    app = make_executor(make_deps(tmp_path, []))
    graph = app.get_graph()
    assert set(graph.nodes) == {"__start__", "executor", "__end__"}
    assert_snapshot("executor.mmd", graph.draw_mermaid())
