"""Stage 7 alone: output or typed error captured, a hung tool signalled, a pause passed on."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from langgraph.errors import GraphInterrupt

from execgraph.nodes.executor.stages.invoke import run_tool
from execgraph.tools import InvokeContext, tool_spec
from tests.nodes.executor.stages.stage_helpers import ctx, save


def test_invoke_captures_typed_foreign_and_timeout(tmp_path: Path) -> None:
    pool = ThreadPoolExecutor(4)
    ok = run_tool(save, save.input_model(path="a"), ctx(tmp_path), pool)
    assert ok.output is not None and ok.output.data == "saved" and ok.output.committed is True

    @tool_spec
    def boom() -> str:
        """Raise a foreign exception."""
        raise OSError("disk /secret/path exploded")

    raised = run_tool(boom, boom.input_model(), ctx(tmp_path), pool)
    assert type(raised.error).__name__ == "ToolRaised" and "secret" not in str(raised.error)

    release = threading.Event()

    @tool_spec(effect="write")
    def stuck(ctx: InvokeContext) -> str:
        """Ignore the deadline until released; honour cancellation."""
        ctx.cancel.wait(30)
        release.set()
        return "late"

    context = ctx(tmp_path, deadline=time.time() + 0.05)
    cancelled = run_tool(stuck, stuck.input_model(), context, pool)
    assert context.cancel.is_set() and release.wait(5)
    assert cancelled.output is not None  # finished within the grace period after cancel

    @tool_spec
    def interrupts() -> str:
        """Try to pause the graph from inside a tool."""
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        run_tool(interrupts, interrupts.input_model(), ctx(tmp_path), pool)
