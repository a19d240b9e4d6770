"""A real adapter's ``partial`` as a run sees it: the ToolResult keeps the committed and
pending items and the recovery reference, the model's observation names them, and the
event log (what ``execgraph trace`` prints) carries the recovery reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from execgraph.cli.render import render_status
from execgraph.cli.trace import trace_table
from execgraph.engines.spec import RunView
from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter
from tests.tools.adapters.test_files_batch import FILES, _fail_on


def _call(name: str, args: dict[str, Any], i: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


def test_a_partial_write_reaches_result_observation_and_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old a")
    _fail_on(monkeypatch, "c.txt")
    store = SqliteExecutionStore(tmp_path / "exec.db")
    model = ScriptedChatModel(
        [_call("write_files", {"files": FILES}, "1"), _call("finish", {"output": "done"}, "2")]
    )
    app = build_graph(
        "react", model=model, tools=FileAdapter(ws, write_files=True).tools(), store=store,
        checkpointer=InMemorySaver(), workspace=ws, home=tmp_path,
    )  # fmt: skip
    out = app.invoke({"task": {"goal": "write three files"}}, {"configurable": {"thread_id": "p1"}})
    (result,) = [r for r in out["results"].values() if r["tool_name"] == "write_files"]
    assert (result["outcome"], result["status"]) == ("partial", "PARTIAL")
    partial = result["partial"]
    assert partial["committed"] == ["a.txt", "sub/b.txt"] and partial["pending"] == ["c.txt"]
    ref = partial["recovery_ref"]["ref"]
    assert (ws / ref).is_file()
    # The model's observation names what is pending and where recovery starts.
    (seen,) = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "write_files"]
    assert '"pending": ["c.txt"]' in str(seen.content) and ref in str(seen.content)
    # The event log has it: the side effect's summary and the committed result.
    observed = [e for e in store.events("p1") if e.type == "tool.side_effect_observed"]
    assert any(ref in json.dumps(e.payload) for e in observed)
    # ``execgraph trace`` shows the counts and the reference on the call's completion.
    trace = Console(record=True, width=500)
    trace.print(trace_table(store.events("p1")))
    assert f"partial / PARTIAL · 2 committed, 1 pending · recovery: {ref}" in trace.export_text()
    # A run whose write stopped midway never reads as plainly completed.
    assert out["status"] != "COMPLETED"
    # ``execgraph status`` shows the stopped call and where its recovery starts.
    console = Console(record=True, width=400)
    render_status(console, RunView("p1", str(out["status"]), values=dict(out)))
    shown = console.export_text()
    assert f"partial: {result['call_id']} write_files — 2 committed, 1 pending" in shown
    assert f"recovery: {ref}" in shown
