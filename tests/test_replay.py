"""Trajectory replay: a recorded demo run re-runs with no model call and no side effect."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.demo.build import DEMO_STAGES, build_demo_graph, demo_task, demo_tools
from execgraph.demo.research import RESEARCH_CHECKS
from execgraph.graph.build import build_graph
from execgraph.replay import replay_run
from execgraph.state.store.sqlite import SqliteExecutionStore


def _record(tmp_path: Path, arch: str) -> tuple[SqliteExecutionStore, Path, str]:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_demo_graph(arch, home=tmp_path, store=store, checkpointer=InMemorySaver())
    run_id = f"rec-{arch}"
    cfg: dict[str, Any] = {"configurable": {"thread_id": run_id}}
    out = app.invoke({"task": demo_task()}, cfg)
    while "__interrupt__" in out:
        out = app.invoke(
            Command(resume={i.id: {"action": "approve"} for i in out["__interrupt__"]}), cfg
        )
    assert out["status"] == "COMPLETED"
    return store, tmp_path / "workspace", run_id


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_replay_reproduces_the_run_without_model_or_effects(tmp_path: Path, arch: str) -> None:
    store, ws, run_id = _record(tmp_path, arch)
    before = _snapshot(ws)
    report = replay_run(
        partial(build_graph, arch, stages=DEMO_STAGES),
        demo_tools(ws),
        store,
        run_id,
        demo_task(),
        checks=RESEARCH_CHECKS,
        workspace=ws,
    )
    assert report.same, report.diff
    assert report.replayed_status == report.recorded_status == "COMPLETED"
    assert report.replayed_calls == report.recorded_calls and report.recorded_calls
    assert _snapshot(ws) == before  # nothing in the real workspace changed


def test_a_changed_policy_gives_a_visible_diff(tmp_path: Path) -> None:
    store, ws, run_id = _record(tmp_path, "react")
    report = replay_run(
        partial(build_graph, "react", stages=DEMO_STAGES),
        demo_tools(ws),
        store,
        run_id,
        demo_task(),
        checks=RESEARCH_CHECKS,
        workspace=ws,
        policy=[{"tool": "publish_report", "decision": "deny"}],
    )
    assert not report.same
    assert any("publish_report" in line or "status" in line for line in report.diff), report.diff
    assert report.replayed_status != "COMPLETED"
