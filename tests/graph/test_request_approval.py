"""``request_approval``: the model asks a person to approve a call the policy would allow.

In every architecture that offers tools, the model may call ``request_approval(tool, args,
reason)``. The call goes through the executor's ordinary pipeline, but a person is asked
first (the usual approval request, showing the model's reason): approved, it runs once and
is not asked about again; rejected, it does not run, and the rejection is a person's — a
later call of the same target is asked about again. A policy's deny stays a deny.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.eval.trajectory import read_trajectory
from execgraph.graph import build_graph
from execgraph.nodes.decide import parse_reply
from execgraph.state.contracts import DecisionKind
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter
from tests.graph.test_architectures import STAGES, TASK

REPORT = {"path": "report.txt", "content": "The fact is 42."}
WHY = "report.txt may hold the user's own notes"


def call(name: str, args: dict[str, Any], i: str = "x") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


READ = call("read_file", {"path": "source.txt"})
ASK = call("request_approval", {"tool": "write_file", "args": REPORT, "reason": WHY})
FINISH = call("finish", {"output": "report.txt says the fact is 42"})
S_READ = {"id": "s1", "tool": "read_file", "arguments": {"path": "source.txt"}}
S_ASKED = {
    "id": "s2",
    "tool": "write_file",
    "arguments": REPORT,
    "depends_on": ["s1"],
    "approval_asked": WHY,
}

APPROVED: dict[str, list[AIMessage]] = {
    "react": [READ, ASK, FINISH],
    "workflow": [READ, ASK, FINISH],
    "plan_execute": [call("submit_plan", {"steps": [S_READ, S_ASKED]}), FINISH],
    "plan_execute_direct": [ASK, FINISH],  # a tool-calling model, no plan
    "hybrid": [READ, call("finish", {"output": "collected"}), ASK, FINISH],
}


def _graph(
    tmp_path: Path, arch: str, replies: list[AIMessage], policy: Any = None
) -> tuple[Any, ScriptedChatModel, SqliteExecutionStore, Path]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "source.txt").write_text("fact: 42\n")
    model = ScriptedChatModel(replies)
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        arch.removesuffix("_direct"),
        model=model,
        tools=[FileAdapter(ws)],
        policy=policy,
        store=store,
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
        stages=STAGES,
    )
    return app, model, store, ws


def _writes(store: SqliteExecutionStore, run_id: str) -> list[Any]:
    return [r for r in store.committed(run_id) if r.tool.split("@")[0] == "write_file"]


@pytest.mark.parametrize("arch", list(APPROVED))
def test_the_model_asks_first_and_an_approved_call_runs_once(tmp_path: Path, arch: str) -> None:
    app, model, store, ws = _graph(tmp_path, arch, APPROVED[arch])
    cfg = {"configurable": {"thread_id": arch}}
    paused = app.invoke({"task": TASK}, cfg)
    [asked] = paused["__interrupt__"]
    shown = asked.value
    assert shown["tool"] == "write_file" and WHY in shown["reason"]
    assert shown["arguments"]["path"] == "report.txt" and shown["args_hash"]
    assert not (ws / "report.txt").exists()  # nothing ran before the person decided

    out = app.invoke(Command(resume="approve"), cfg)
    assert "__interrupt__" not in out  # approved once: not asked again
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "report.txt").read_text() == "The fact is 42."
    model.assert_consumed()
    run_id = out["contract"]["run_id"]
    [record] = _writes(store, run_id)
    assert record.args_hash == shown["args_hash"]  # what ran is what the person saw
    asked_events = store.events(run_id, types=[EventType.APPROVAL_REQUESTED])
    assert len(asked_events) == 1
    # the evaluation reads it as the tool call it is, linked to the call that ran
    trajectory = read_trajectory(store.events(run_id))
    [judged] = [d for d in trajectory.decisions if d.call and d.call.tool == "write_file"]
    assert judged.kind == "tool_call" and judged.call is not None and judged.call.succeeded


def test_the_offered_tool_names_the_tools_of_the_turn(tmp_path: Path) -> None:
    app, model, _, _ = _graph(tmp_path, "react", [READ, ASK, FINISH])
    cfg = {"configurable": {"thread_id": "offered"}}
    app.invoke({"task": TASK}, cfg)
    assert "request_approval" in model.tools_offered[0]
    app.invoke(Command(resume="approve"), cfg)


def test_a_rejected_call_does_not_run_and_the_rejection_sticks(tmp_path: Path) -> None:
    direct = call("write_file", {"path": "report.txt", "content": "Fact: 42."}, "again")
    app, model, store, ws = _graph(
        tmp_path, "react", [ASK, direct, call("abort", {"reason": "no"})]
    )
    cfg = {"configurable": {"thread_id": "rejected"}}
    app.invoke({"task": TASK}, cfg)
    out = app.invoke(Command(resume={"action": "reject", "reason": "leave it"}), cfg)
    assert not (ws / "report.txt").exists()
    [first] = [r for r in out["results"].values() if r["tool_call_id"] == "request_approval-x"]
    assert first["status"] == "DENIED" and first["error"]["type"] == "ApprovalRejected"
    # The same write without asking is held to the person's no: they are asked again.
    [again] = out["__interrupt__"]
    assert "a person rejected write_file" in again.value["reason"]
    out = app.invoke(Command(resume="reject"), cfg)
    assert not (ws / "report.txt").exists() and out["status"] == "FAILED"
    assert _writes(store, out["contract"]["run_id"]) == []
    model.assert_consumed()


def test_a_persons_edit_answers_the_models_request(tmp_path: Path) -> None:
    app, model, store, ws = _graph(tmp_path, "react", [ASK, FINISH])
    cfg = {"configurable": {"thread_id": "edited"}}
    app.invoke({"task": TASK}, cfg)
    edited = {"path": "report.txt", "content": "Checked: the fact is 42."}
    out = app.invoke(Command(resume={"action": "edit", "arguments": edited}), cfg)
    assert "__interrupt__" not in out  # the person decided: not asked again
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "report.txt").read_text() == "Checked: the fact is 42."
    assert len(_writes(store, out["contract"]["run_id"])) == 1
    model.assert_consumed()


def test_a_policy_deny_stays_a_deny(tmp_path: Path) -> None:
    deny = [{"tool": "write_file", "decision": "deny", "reason": "reports are frozen"}]
    app, model, _, ws = _graph(tmp_path, "react", [ASK, call("abort", {"reason": "denied"})], deny)
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": "deny"}})
    assert "__interrupt__" not in out  # nobody is asked about what the policy denies
    [result] = out["results"].values()
    assert result["status"] == "DENIED" and "reports are frozen" in result["error"]["message"]
    assert not (ws / "report.txt").exists()
    model.assert_consumed()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"args": REPORT, "reason": WHY}, "needs the name of the tool"),
        ({"tool": "write_file", "args": "not json", "reason": WHY}, "must be a JSON object"),
        ({"tool": "write_file", "args": [1], "reason": WHY}, "must be a JSON object"),
    ],
)
def test_a_malformed_request_is_the_models_to_repair(args: dict[str, Any], problem: str) -> None:
    decisions, found = parse_reply(call("request_approval", args), "t1")
    assert decisions == [] and found is not None and problem in found


def test_arguments_given_as_json_text_are_read() -> None:
    text = '{"path": "report.txt", "content": "x"}'
    asked = call("request_approval", {"tool": "write_file", "args": text, "reason": WHY})
    [decision], problem = parse_reply(asked, "t1")
    assert problem is None and decision.kind is DecisionKind.REQUEST_APPROVAL
    assert decision.arguments == {"path": "report.txt", "content": "x"}
    assert decision.tool_name == "write_file" and decision.content == WHY
