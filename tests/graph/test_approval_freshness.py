"""An approval shows its target's state, and a target that changed meanwhile is asked again.

On resume the approval is checked again: the target may have changed while the person
was deciding. Driven through compiled graphs (the executor alone, and ReAct) with the real
FileAdapter.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.state.contracts import ToolResult
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import PolicyEngine
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.adapters.files import ABSENT
from tests.support.executor import config, make_deps, make_executor, request

ASK_WRITES = [{"tool": "write_file", "decision": "require_approval", "reason": "plans change"}]
THEIRS = "changed by someone else while you decided\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _approve(pause: Any) -> Command:
    return Command(resume={pause.id: {"action": "approve"}})


def _executor(tmp_path: Path) -> tuple[Any, Any, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    deps = make_deps(tmp_path, [FileAdapter(ws)], PolicyEngine(ASK_WRITES))
    return deps, make_executor(deps), ws


def test_a_target_changed_during_approval_is_asked_again_with_its_new_state(
    tmp_path: Path,
) -> None:
    deps, app, ws = _executor(tmp_path)
    (ws / "plan.txt").write_text("v1\n")
    req = request("write_file", {"path": "plan.txt", "content": "v2\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config())["__interrupt__"]
    assert pause.value["target_state"] == {"file:plan.txt": _sha("v1\n")}  # what they see

    (ws / "plan.txt").write_text(THEIRS)  # while the person decides
    out = app.invoke(_approve(pause), config())
    assert (ws / "plan.txt").read_text() == THEIRS  # not overwritten
    assert "call-1" not in (out.get("results") or {})
    [again] = out["__interrupt__"]
    assert again.id != pause.id
    assert again.value["target_state"] == {"file:plan.txt": _sha(THEIRS)}
    assert again.value["args_hash"] == pause.value["args_hash"]
    assert "file:plan.txt changed" in again.value["reason"]

    out = app.invoke(_approve(again), config())
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.outcome == "succeeded", result.error
    assert (ws / "plan.txt").read_text() == "v2\n"
    asked = [e for e in deps.store.events("run-1") if e.type == EventType.APPROVAL_REQUESTED]
    assert [e.payload["target_state"]["file:plan.txt"] for e in asked] == [
        _sha("v1\n"),
        _sha(THEIRS),
    ]


def test_asked_again_and_rejected_never_writes(tmp_path: Path) -> None:
    _, app, ws = _executor(tmp_path)
    (ws / "plan.txt").write_text("v1\n")
    req = request("write_file", {"path": "plan.txt", "content": "v2\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config())["__interrupt__"]
    (ws / "plan.txt").write_text(THEIRS)
    [again] = app.invoke(_approve(pause), config())["__interrupt__"]
    out = app.invoke(Command(resume={again.id: {"action": "reject"}}), config())
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.error is not None and result.error.type == "ApprovalRejected"
    assert (ws / "plan.txt").read_text() == THEIRS


def test_a_file_created_during_approval_counts_as_changed(tmp_path: Path) -> None:
    _, app, ws = _executor(tmp_path)
    req = request("write_file", {"path": "new.txt", "content": "mine\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config())["__interrupt__"]
    assert pause.value["target_state"] == {"file:new.txt": ABSENT}
    (ws / "new.txt").write_text(THEIRS)
    [again] = app.invoke(_approve(pause), config())["__interrupt__"]
    assert again.value["target_state"] == {"file:new.txt": _sha(THEIRS)}
    assert (ws / "new.txt").read_text() == THEIRS


def test_an_unchanged_target_runs_on_the_first_approval(tmp_path: Path) -> None:
    _, app, ws = _executor(tmp_path)
    (ws / "plan.txt").write_text("v1\n")
    req = request("write_file", {"path": "plan.txt", "content": "v2\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config())["__interrupt__"]
    out = app.invoke(_approve(pause), config())
    assert "__interrupt__" not in out
    assert ToolResult.model_validate(out["results"]["call-1"]).outcome == "succeeded"
    assert (ws / "plan.txt").read_text() == "v2\n"


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": name}])


def test_react_asks_again_after_the_target_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "plan.txt").write_text("v1\n")
    replies = [
        _call("write_file", {"path": "plan.txt", "content": "v2\n"}),
        _call("finish", {"output": "plan.txt now says v2"}),
    ]
    model = ScriptedChatModel(replies)
    app = build_graph(
        "react",
        model=model,
        tools=[FileAdapter(ws)],
        policy=ASK_WRITES,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
    )
    task: Any = {
        "goal": "set the plan to v2",
        "success_checks": [{"kind": "file_contains", "target": "plan.txt", "value": "v2"}],
    }
    cfg: Any = {"configurable": {"thread_id": "react-approval"}}
    out = app.invoke({"task": task}, cfg)
    [pause] = out["__interrupt__"]
    assert out["status"] == "WAITING"
    assert pause.value["target_state"] == {"file:plan.txt": _sha("v1\n")}
    (ws / "plan.txt").write_text(THEIRS)
    out = app.invoke(_approve(pause), cfg)
    [again] = out["__interrupt__"]
    assert again.value["target_state"] == {"file:plan.txt": _sha(THEIRS)}
    assert (ws / "plan.txt").read_text() == THEIRS
    out = app.invoke(_approve(again), cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "plan.txt").read_text() == "v2\n"
    model.assert_consumed()


def test_a_replayed_approved_call_returns_its_record_not_a_new_question(tmp_path: Path) -> None:
    """The node re-run after a crash past the commit finds the target changed by this very
    call: its record decides, the person is not asked again."""
    _, app, ws = _executor(tmp_path)
    (ws / "plan.txt").write_text("v1\n")
    req = request("write_file", {"path": "plan.txt", "content": "v2\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config("first"))["__interrupt__"]
    first = app.invoke(_approve(pause), config("first"))["results"]["call-1"]
    # The same call again without its checkpoint (as after a crash before it was written):
    # the store's logged question is asked, and the approval finds the call committed.
    [replayed] = app.invoke({"request": req}, config("again"))["__interrupt__"]
    assert replayed.value["target_state"] == {"file:plan.txt": _sha("v1\n")}
    out = app.invoke(_approve(replayed), config("again"))
    assert "__interrupt__" not in out
    assert out["results"]["call-1"] == first


class _SkewedStore(SqliteExecutionStore):
    """A store whose clock is set by the test (the shared clock of two workers whose own
    clocks disagree: the one that asks runs hours ahead of the one that answers)."""

    now = 1_000_000.0

    def clock(self) -> float:
        return self.now


def test_an_approval_expires_by_the_stores_clock_not_a_workers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    deps = make_deps(tmp_path, [FileAdapter(ws)], PolicyEngine(ASK_WRITES))
    deps = replace(deps, store=_SkewedStore(tmp_path / "skewed.db"))
    app = make_executor(deps)
    req = request("write_file", {"path": "plan.txt", "content": "v2\n"}, root=ws)
    [pause] = app.invoke({"request": req}, config())["__interrupt__"]
    assert pause.value["expires_at"] == _SkewedStore.now + deps.approval_ttl_s  # stamped by it

    _SkewedStore.now += deps.approval_ttl_s + 1  # past the expiry, on the store's clock only
    out = app.invoke(_approve(pause), config())
    assert not (ws / "plan.txt").exists()
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.outcome != "succeeded" and "expired" in str(result.error), result
