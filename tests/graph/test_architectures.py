"""The seed's three scenarios under each of the four architectures, on real files.

1. Happy path: COMPLETED, with evidence.
2. A tool the policy denies is never executed, and the run does not end COMPLETED.
3. A finish without evidence is rejected by the verifier.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import Stage, build_graph
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter

TASK = {
    "goal": "Read source.txt and write report.txt stating the fact it holds.",
    "success_checks": [{"kind": "file_contains", "target": "report.txt", "value": "42"}],
    "budgets": {"model_calls": 12, "tool_calls": 8},
}
STAGES = [
    Stage("read", ("read_file",), "Read the source."),
    Stage("write", ("write_file",), "Write the report."),
]
DENY_WRITES = [{"tool": "write_file", "decision": "deny", "reason": "reports are frozen"}]


def call(name: str, args: dict[str, Any], i: str = "x") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


READ = call("read_file", {"path": "source.txt"})
WRITE = call("write_file", {"path": "report.txt", "content": "The fact is 42."})


def finish(text: str = "report.txt says the fact is 42") -> AIMessage:
    return call("finish", {"output": text})


def plan(*steps: dict[str, Any]) -> AIMessage:
    return call("submit_plan", {"steps": list(steps)})


ABORT = call("abort", {"reason": "cannot finish"})
S_READ = {"id": "s1", "tool": "read_file", "arguments": {"path": "source.txt"}}
S_WRITE = {
    "id": "s2",
    "tool": "write_file",
    "arguments": {"path": "report.txt", "content": "The fact is 42."},
    "depends_on": ["s1"],
}

SCRIPTS: dict[str, dict[str, list[AIMessage]]] = {
    "react": {
        "happy": [READ, WRITE, finish()],
        "denied": [WRITE, finish(), ABORT],
        "no_evidence": [finish(), ABORT],
    },
    "workflow": {
        "happy": [READ, WRITE, finish()],
        "denied": [READ, WRITE, finish()],
        "no_evidence": [AIMessage(content="skip"), AIMessage(content="skip"), finish()],
    },
    "plan_execute": {
        "happy": [plan(S_READ, S_WRITE), finish()],
        "denied": [plan(S_READ, S_WRITE), ABORT],
        "no_evidence": [plan(S_READ), finish(), ABORT],
    },
    # A phase without tools is skipped (FileAdapter has no irreversible tool: no publish),
    # and the last phase's finish is the result.
    "hybrid": {
        "happy": [READ, finish("collected"), WRITE, finish()],
        "denied": [READ, finish("collected"), WRITE, finish(), ABORT],
        "no_evidence": [finish("collected"), finish(), ABORT],
    },
}


def _run(tmp_path: Path, arch: str, scenario: str) -> tuple[dict[str, Any], Path, Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "source.txt").write_text("fact: 42\n")
    model = ScriptedChatModel(SCRIPTS[arch][scenario])
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        arch,
        model=model,
        tools=[FileAdapter(ws)],
        policy=DENY_WRITES if scenario == "denied" else None,
        store=store,
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
        stages=STAGES,
    )
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": f"{arch}-{scenario}"}})
    model.assert_consumed()
    return out, ws, store


ARCHS = ["workflow", "react", "plan_execute", "hybrid"]


@pytest.mark.parametrize("arch", ARCHS)
def test_happy_path_completes_with_evidence(tmp_path: Path, arch: str) -> None:
    out, ws, _ = _run(tmp_path, arch, "happy")
    assert out["status"] == "COMPLETED", out.get("error")
    assert "42" in (ws / "report.txt").read_text()
    kinds = {e["kind"] for e in out["evidence"].values()}
    assert out["evidence"] and any(e.get("verified") for e in out["evidence"].values()), kinds
    assert out["verification"]["accepted"] is True
    assert out["budget"]["used"]["tool_calls"] == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_denied_tool_never_executes(tmp_path: Path, arch: str) -> None:
    out, ws, store = _run(tmp_path, arch, "denied")
    assert out["status"] != "COMPLETED"
    assert not (ws / "report.txt").exists()
    denied = [r for r in out["results"].values() if r["tool_name"] == "write_file"]
    assert denied and all(r["status"] == "DENIED" for r in denied)
    assert all(r["side_effect"]["attempted"] is False for r in denied)
    started = [e for e in store.events(f"{arch}-denied") if e.type == "tool.started"]
    assert all(e.payload["tool"].split("@")[0] != "write_file" for e in started)


@pytest.mark.parametrize("arch", ARCHS)
def test_finish_without_evidence_is_rejected(tmp_path: Path, arch: str) -> None:
    out, _, store = _run(tmp_path, arch, "no_evidence")
    assert out["status"] in ("FAILED", "PARTIAL")
    assert out["verification"]["accepted"] is False
    assert any("report.txt" in reason for reason in out["verification"]["failed"])
    # Every judged finish is in the event log, with why it was rejected.
    verdicts = [e for e in store.events(f"{arch}-no_evidence") if e.type == "verifier.verdict"]
    assert verdicts and not any(v.payload["accepted"] for v in verdicts)
    assert verdicts[-1].payload["failed"] == out["verification"]["failed"]


@pytest.mark.parametrize("arch", ARCHS)
def test_an_accepted_finish_is_logged_before_the_run_ends(tmp_path: Path, arch: str) -> None:
    out, _, store = _run(tmp_path, arch, "happy")
    logged = store.events(f"{arch}-happy")
    kinds = [e.type for e in logged if e.type != EventType.STATE_CHECKPOINTED]
    assert kinds.count("verifier.verdict") >= 1
    last = max(i for i, k in enumerate(kinds) if k == "verifier.verdict")
    assert kinds[last + 1 :] == ["run.finished"]
    [accepted] = [e for e in store.events(f"{arch}-happy") if e.type == "verifier.verdict"][-1:]
    assert accepted.payload["accepted"] is True and out["status"] == "COMPLETED"
