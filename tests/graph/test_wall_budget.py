"""The wall-time budget reaches a running call as its deadline.

A call's deadline is the earlier of its own timeout and the run's time left, so a tool
that honours it stops when the run's time is up, and one that ignores it is abandoned
after the grace period (a write's outcome then unknown). Bounds are upper bounds with
generous slack, never exact times: budget + grace, with the tools made longer than that.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.nodes.executor.stages.invoke import CANCEL_GRACE_S
from execgraph.state.errors import ToolCancelled
from execgraph.testing import ScriptedChatModel
from execgraph.tools import InvokeContext, ToolSpec, tool_spec
from execgraph.tools.adapters.fake import FakeAdapter
from tests.reliability.scenarios import ARCHS, STAGES, TASK, budget_tool_calls

pytestmark = pytest.mark.timeout(60)

SLACK_S = 1.5
WORK_S = 4.0  # longer than a 1 s budget plus its grace: the old code let it finish


def _calls(name: str, n: int) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": {"i": i}, "id": f"{name}-{i}"} for i in range(n)],
    )


def _run(
    tmp_path: Path, tool: ToolSpec, n: int, wall_s: float, *then: AIMessage
) -> tuple[dict[str, Any], float]:
    model = ScriptedChatModel([_calls(tool.name, n), *then])
    app = build_graph(
        "react", model=model, tools=[tool], checkpointer=InMemorySaver(), home=tmp_path
    )
    task = {"goal": "work", "budgets": {"wall_time_s": wall_s}}
    started = time.monotonic()
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "wall"}})
    return out, time.monotonic() - started


@tool_spec(effect="read")
def waits_for_cancel(i: int, ctx: InvokeContext) -> str:
    """Work until done or told to stop."""
    if ctx.cancel.wait(WORK_S):
        raise ToolCancelled("stopped on the signal")
    return "done"


@tool_spec(effect="read")
def watches_the_clock(i: int, ctx: InvokeContext) -> str:
    """Work in slices while time is left."""
    end = time.monotonic() + WORK_S
    while time.monotonic() < end:
        left = ctx.remaining_s()
        if left is not None and left <= 0:
            raise ToolCancelled("out of time")
        time.sleep(0.02)
    return "done"


@pytest.mark.parametrize("tool", [waits_for_cancel, watches_the_clock], ids=lambda t: t.name)
def test_a_tool_that_honours_its_deadline_stops_at_the_wall_budget(
    tmp_path: Path, tool: ToolSpec
) -> None:
    out, elapsed = _run(tmp_path, tool, 1, wall_s=1.0)
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert "wall_time_s" in out["error"]["message"]
    (result,) = out["results"].values()
    assert result["error"]["type"] == "DeadlineExceeded"
    assert elapsed < 1.0 + CANCEL_GRACE_S < WORK_S


@pytest.mark.parametrize("effect", ["read", "write"])
def test_a_tool_that_ignores_its_deadline_is_abandoned_within_the_grace(
    tmp_path: Path, effect: str
) -> None:
    release = threading.Event()

    def stubborn(i: int) -> str:
        """Work, deaf to every signal."""
        release.wait(WORK_S + SLACK_S + CANCEL_GRACE_S)
        return "late"

    tool = tool_spec(stubborn, effect=effect)  # type: ignore[arg-type]
    try:
        out, elapsed = _run(tmp_path, tool, 1, wall_s=1.0)
    finally:
        release.set()
    assert out["status"] == "BUDGET_EXHAUSTED"
    (result,) = out["results"].values()
    assert result["outcome"] == ("failed" if effect == "read" else "unknown")
    assert elapsed < 1.0 + CANCEL_GRACE_S + SLACK_S


def test_a_parallel_batch_ends_in_the_runs_time(tmp_path: Path) -> None:
    """Three 3 s tools under a 2 s budget: side by side, each stopped at the run's deadline."""

    @tool_spec(effect="read")
    def slow(i: int, ctx: InvokeContext) -> str:
        """Three seconds of work, stopped on the signal."""
        if ctx.cancel.wait(3.0):
            raise ToolCancelled("stopped on the signal")
        return "done"

    out, elapsed = _run(tmp_path, slow, 3, wall_s=2.0)
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["tool_calls"] == 3
    results = list(out["results"].values())
    assert len(results) == 3
    assert {r["error"]["type"] for r in results if r["error"]} == {"DeadlineExceeded"}
    assert all(r["outcome"] == "failed" for r in results)  # none ran its 3 s
    assert elapsed < 2.0 + CANCEL_GRACE_S + SLACK_S


def test_the_deadline_a_tool_sees_is_the_runs(tmp_path: Path) -> None:
    seen: list[float | None] = []

    @tool_spec(effect="read", timeout_s=600)
    def probe(i: int, ctx: InvokeContext) -> str:
        """Report the time left."""
        seen.append(ctx.remaining_s())
        return "ok"

    abort = AIMessage(
        content="", tool_calls=[{"name": "abort", "args": {"reason": "seen"}, "id": "a"}]
    )
    out, _ = _run(tmp_path, probe, 1, 30.0, abort)
    assert out["status"] == "FAILED"
    assert seen and seen[0] is not None and 0 < seen[0] <= 30.0  # not the tool's 600 s


@pytest.mark.parametrize("arch", ARCHS)
def test_every_architecture_stops_a_hanging_call_at_the_wall_budget(
    tmp_path: Path, arch: str
) -> None:
    """The first lookup hangs (it stops only when told); the run's 1 s ends it."""
    fake = FakeAdapter()
    fake.tool("lookup", effect="read", behaviour="hang")
    fake.tool("save", effect="write", verify="pass")
    app = build_graph(
        arch,
        model=ScriptedChatModel(budget_tool_calls(arch).replies),
        tools=fake.tools(),
        checkpointer=InMemorySaver(),
        home=tmp_path,
        stages=STAGES,
    )
    task = {**TASK, "budgets": {**TASK["budgets"], "wall_time_s": 1.0}}
    started = time.monotonic()
    try:
        out = app.invoke({"task": task}, {"configurable": {"thread_id": f"wall-{arch}"}})
    finally:
        fake.close()
    assert time.monotonic() - started < 1.0 + CANCEL_GRACE_S + SLACK_S
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert fake.call_count("lookup") == 1 and fake.call_count("save") == 0
