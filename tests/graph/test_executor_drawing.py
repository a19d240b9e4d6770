"""The executor subgraph's shape is part of its contract: snapshot its mermaid drawing."""

from __future__ import annotations

from pathlib import Path

from tests.support.executor import make_deps, make_executor
from tests.support.snapshots import assert_snapshot


def test_executor_mermaid_snapshot(tmp_path: Path) -> None:
    app = make_executor(make_deps(tmp_path, []))
    drawing = app.get_graph().draw_mermaid()
    for node in ("authorize", "approval", "execute"):
        assert node in drawing
    assert_snapshot("executor.mmd", drawing)
