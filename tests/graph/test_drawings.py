"""Each compiled architecture's shape is part of its contract: mermaid snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import ARCHITECTURES, Stage, build_graph
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter
from tests.support.snapshots import assert_snapshot


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_architecture_mermaid_snapshot(tmp_path: Path, arch: str) -> None:
    app = build_graph(
        arch,
        model=ScriptedChatModel([]),
        tools=[FileAdapter(tmp_path)],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        stages=[Stage("read", ("read_file",), "Read."), Stage("write", ("write_file",), "Write.")],
    )
    drawing = app.get_graph().draw_mermaid()
    assert "executor" in drawing and "admit" in drawing
    assert_snapshot(f"{arch}.mmd", drawing)
