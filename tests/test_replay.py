"""Trajectory replay: a recorded demo run re-runs with no model call and no side effect."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.demo.build import DEMO_STAGES, build_demo_graph, demo_task, demo_tools
from execgraph.demo.research import RESEARCH_CHECKS
from execgraph.graph.build import build_graph
from execgraph.replaying import replay_run
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing.scripted import ScriptedChatModel
from execgraph.tools.spec import tool_spec


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


def _replay_demo(store: Any, ws: Path, run_id: str, arch: str, **kw: Any) -> Any:
    """Replay a recorded demo run with the demo's tools, stages and checks."""
    return replay_run(
        partial(build_graph, arch, stages=DEMO_STAGES),
        demo_tools(ws),
        store,
        run_id,
        demo_task(),
        checks=RESEARCH_CHECKS,
        workspace=ws,
        **kw,
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_replay_reproduces_the_run_without_model_or_effects(tmp_path: Path, arch: str) -> None:
    store, ws, run_id = _record(tmp_path, arch)
    before = _snapshot(ws)
    report = _replay_demo(store, ws, run_id, arch)
    assert report.same, report.diff
    assert report.replayed_status == report.recorded_status == "COMPLETED"
    assert report.replayed_calls == report.recorded_calls and report.recorded_calls
    assert _snapshot(ws) == before  # nothing in the real workspace changed


def test_a_changed_policy_gives_a_visible_diff(tmp_path: Path) -> None:
    store, ws, run_id = _record(tmp_path, "react")
    report = _replay_demo(
        store, ws, run_id, "react", policy=[{"tool": "publish_report", "decision": "deny"}]
    )
    assert not report.same
    assert any("publish_report" in line or "status" in line for line in report.diff), report.diff
    assert report.replayed_status != "COMPLETED"


def test_the_replay_counts_its_model_calls_and_the_effects_it_answered(tmp_path: Path) -> None:
    store, ws, run_id = _record(tmp_path, "react")
    report = _replay_demo(store, ws, run_id, "react")
    recorded = sum(1 for e in store.events(run_id) if e.type == EventType.MODEL_CALLED)
    assert report.model_calls == recorded > 0
    # the demo's effects: report.md written (at least once) and published once
    effectful = {
        r.call_id for r in store.committed(run_id) if r.tool in ("write_file", "publish_report")
    }
    assert report.effects_replayed == len(effectful) >= 2


def _amount_tool(default: int) -> Any:
    @tool_spec(name="transfer", effect="write", version="1.0.0")
    def transfer(to: str, amount: int = default) -> str:
        """Transfer money."""
        return f"sent {amount} to {to}"

    return transfer


def test_a_changed_tool_default_is_a_divergence_even_with_the_same_ids(tmp_path: Path) -> None:
    """The model's call names only ``to``; the tool's default gives the amount. A release
    that turns the default from 1 into 1000 replays with the same call ids, tool names and
    statuses — only the normalized arguments tell, and the replay must say so."""
    store = SqliteExecutionStore(tmp_path / "exec.db")
    replies = [
        AIMessage("", tool_calls=[{"name": "transfer", "args": {"to": "bob"}, "id": "c1"}]),
        AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "sent"}, "id": "c2"}]),
    ]
    task = {
        "goal": "pay bob",
        "success_checks": [{"kind": "tool_succeeded", "target": "transfer"}],
    }
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[_amount_tool(1)],
        store=store,
        home=tmp_path,
        checkpointer=InMemorySaver(),
    )
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "pay"}})
    assert out["status"] == "COMPLETED"
    same = replay_run(partial(build_graph, "react"), [_amount_tool(1)], store, "pay", task)
    assert same.same, same.diff
    changed = replay_run(partial(build_graph, "react"), [_amount_tool(1000)], store, "pay", task)
    assert changed.replayed_status == changed.recorded_status == "COMPLETED"
    assert changed.replayed_calls == changed.recorded_calls
    assert not changed.same
    assert any("arguments differ once normalized" in line for line in changed.diff), changed.diff


# --------------------------------------------------------------------------- public replay


def _transfer_run(store: Any, tmp_path: Path) -> None:
    """Record the run ``pay`` in ``store``: one write, then finish."""
    replies = [
        AIMessage("", tool_calls=[{"name": "transfer", "args": {"to": "bob"}, "id": "c1"}]),
        AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "sent"}, "id": "c2"}]),
    ]
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[_amount_tool(1)],
        store=store,
        home=tmp_path,
        checkpointer=InMemorySaver(),
    )
    out = app.invoke({"task": {"goal": "pay bob"}}, {"configurable": {"thread_id": "pay"}})
    assert out["status"] == "COMPLETED"


def test_replay_is_a_public_function_even_once_its_mechanism_is_imported() -> None:
    import inspect

    import execgraph.engines.reading  # imports the replay mechanism, as the CLI does
    from execgraph import replay

    assert execgraph.engines.reading is not None
    assert inspect.isfunction(replay) and replay.__name__ == "replay"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "exec.db")
    return str(request.getfixturevalue("postgres_database"))


def test_public_replay_over_each_store_is_measured(store_url: str, tmp_path: Path) -> None:
    from execgraph import open_store, replay

    recording = open_store(store_url)
    try:
        _transfer_run(recording, tmp_path)
        recorded_replies = sum(
            1 for e in recording.events("pay") if e.type == EventType.MODEL_CALLED
        )
        expected_store = type(recording).__name__
    finally:
        recording.close()
    report = replay("pay", tools=[_amount_tool(1)], store=store_url)  # the goal as recorded
    assert report.same, report.diff
    assert report.replayed_status == report.recorded_status == "COMPLETED"
    assert report.model_calls == report.replies_used == report.recorded_model_calls
    assert report.recorded_model_calls == recorded_replies > 0
    assert report.effects_replayed == 1 and report.workspace_changes == []
    assert report.store == expected_store
    # A changed tool shows up, whatever the store.
    changed = replay("pay", tools=[_amount_tool(1000)], store=store_url)
    assert not changed.same


def test_public_replay_of_an_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    from execgraph import replay
    from execgraph.state.errors import UsageError

    with pytest.raises(UsageError, match="no recording"):
        replay("nope", tools=[], store=str(tmp_path / "exec.db"))


def test_the_replay_table_shows_what_was_measured() -> None:
    from rich.console import Console

    from execgraph.cli.render import replay_table
    from execgraph.replaying import ReplayReport

    report = ReplayReport(
        "r", "COMPLETED", "COMPLETED", model_calls=3, replies_used=2, recorded_model_calls=4,
        effects_replayed=1, workspace_changes=["notes.txt"], store="PostgresExecutionStore",
    )  # fmt: skip
    console = Console(record=True, width=300)
    console.print(replay_table(report))
    shown = console.export_text()
    assert "3 made, 2 answered from the recording (4 recorded)" in shown
    assert "1 file(s) changed: notes.txt" in shown
    assert "PostgresExecutionStore" in shown
