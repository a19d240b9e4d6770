"""Hybrid means what the other architectures mean: a pause is WAITING, each publish call's
approval stands on its own, a phase without tools costs no model call, a cancel publishes
nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.nodes.cancel import request_cancel
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import Counter


def calls(*items: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"{n}-{i}"} for i, (n, a) in enumerate(items)],
    )


def finish(text: str) -> AIMessage:
    return calls(("finish", {"output": text}))


LOOK = calls(("look", {"item": "a"}))
SAVE = calls(("save", {"item": "a"}))
POST_TWO = calls(("post", {"item": "a"}), ("post", {"item": "b"}))


def toolkit(posted: Counter) -> list[Any]:
    @tool_spec(effect="read")
    def look(item: str) -> dict[str, str]:
        """Look an item up."""
        return {"item": item, "found": "yes"}

    @tool_spec(effect="write")
    def save(item: str) -> str:
        """Save an item."""
        return f"saved {item}"

    @tool_spec(effect="irreversible")
    def post(item: str) -> str:
        """Post an item for everyone to see (irreversible)."""
        posted.add(item)
        return f"posted {item}"

    return [look, save, post]


TASK = {
    "goal": "Look item a up, save it, and post it.",
    "success_checks": [{"kind": "tool_succeeded", "target": "post"}],
    "budgets": {"model_calls": 12, "tool_calls": 8},
}


def build(tmp_path: Path, arch: str, replies: list[Any], tools: list[Any]) -> tuple[Any, Any]:
    model = ScriptedChatModel(replies)
    app = build_graph(
        arch,
        model=model,
        tools=tools,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app, model


def plan(tool: str) -> AIMessage:
    return calls(
        ("submit_plan", {"steps": [{"id": "s1", "tool": tool, "arguments": {"item": "a"}}]})
    )


PAUSING = {
    "react": [calls(("post", {"item": "a"}))],
    "plan_execute": [plan("post")],
    "hybrid": [LOOK, finish("looked"), SAVE, finish("saved"), calls(("post", {"item": "a"}))],
}


@pytest.mark.parametrize("arch", sorted(PAUSING))
def test_a_run_paused_on_an_approval_is_waiting(tmp_path: Path, arch: str) -> None:
    app, _ = build(tmp_path, arch, PAUSING[arch], toolkit(Counter()))
    cfg = {"configurable": {"thread_id": f"wait-{arch}"}}
    out = app.invoke({"task": TASK}, cfg)
    assert out["__interrupt__"]
    assert app.get_state(cfg).values["status"] == "WAITING"


def test_each_publish_call_is_decided_on_its_own(tmp_path: Path) -> None:
    """Approve call A, reject call B of one batch: A is published, B is a failed result at
    phase policy that the model sees, and the run goes on to its verdict."""
    posted = Counter()
    replies = [LOOK, finish("looked"), SAVE, finish("saved"), POST_TWO, finish("posted a")]
    app, model = build(tmp_path, "hybrid", replies, toolkit(posted))
    cfg = {"configurable": {"thread_id": "one-by-one"}}
    out = app.invoke({"task": TASK}, cfg)
    [first] = out["__interrupt__"]
    assert first.value["arguments"] == {"item": "a"}
    out = app.invoke(Command(resume={first.id: {"action": "approve"}}), cfg)
    [second] = out["__interrupt__"]
    assert second.value["arguments"] == {"item": "b"}
    no = {"action": "reject", "reason": "not b"}
    out = app.invoke(Command(resume={second.id: no}), cfg)
    model.assert_consumed()
    assert posted.effects == ["a"]
    assert out["status"] == "COMPLETED", out.get("error")
    by_item = {r["call_id"]: r for r in out["results"].values() if r["tool_name"] == "post"}
    rejected = by_item[second.value["call_id"]]
    assert rejected["outcome"] == "failed" and rejected["status"] == "DENIED"
    assert rejected["error"]["phase"] == "policy"
    assert rejected["error"]["type"] == "ApprovalRejected"
    assert "not b" in rejected["error"]["message"]
    assert rejected["side_effect"]["attempted"] is False
    assert by_item[first.value["call_id"]]["status"] == "OK"
    # the model was shown the rejection before it stated the result
    shown = " ".join(str(m.content) for m in model.calls[-1])
    assert "not b" in shown


def test_a_run_cancelled_while_waiting_publishes_nothing(tmp_path: Path) -> None:
    posted = Counter()
    replies = [LOOK, finish("looked"), SAVE, finish("saved"), POST_TWO]
    app, _ = build(tmp_path, "hybrid", replies, toolkit(posted))
    cfg = {"configurable": {"thread_id": "cancelled"}}
    out = app.invoke({"task": TASK}, cfg)
    [first] = out["__interrupt__"]
    request_cancel(SqliteExecutionStore(tmp_path / "exec.db"), "cancelled", reason="stop")
    out = app.invoke(Command(resume={first.id: {"action": "approve"}}), cfg)
    assert posted.effects == []
    assert out["status"] == "CANCELLED"
    results = [r for r in out["results"].values() if r["tool_name"] == "post"]
    assert len(results) == 2 and all(r["side_effect"]["attempted"] is False for r in results)
    assert all("the run was cancelled" in r["error"]["message"] for r in results)


READ_ONLY = {
    "goal": "Look item a up and report what you found.",
    "success_checks": [{"kind": "tool_succeeded", "target": "look"}],
    "budgets": {"model_calls": 2, "tool_calls": 2},
}


@pytest.mark.parametrize("arch", ["react", "workflow", "plan_execute", "hybrid"])
def test_a_read_only_task_fits_the_same_budget_in_every_architecture(
    tmp_path: Path, arch: str
) -> None:
    """Two model calls (look, then finish) are enough everywhere: hybrid asks no model to
    close the analyze and publish phases it has no tools for."""
    posted = Counter()
    [look, _, _] = toolkit(posted)
    replies = {
        "react": [LOOK, finish("a was found")],
        "workflow": [LOOK, finish("a was found")],
        "plan_execute": [plan("look"), finish("a was found")],
        "hybrid": [LOOK, finish("a was found")],
    }[arch]
    app, model = build(tmp_path, arch, replies, [look])
    out = app.invoke({"task": READ_ONLY}, {"configurable": {"thread_id": f"ro-{arch}"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "a was found"
    assert out["budget"]["used"]["model_calls"] == 2
    model.assert_consumed()


def test_a_task_that_may_not_use_the_write_tools_skips_analyze(tmp_path: Path) -> None:
    """What the task allows decides too: with writes outside allowed_actions, collect is
    the last phase, and the finish of collect is the result."""
    posted = Counter()
    task = {**READ_ONLY, "allowed_actions": ["look"]}
    app, model = build(tmp_path, "hybrid", [LOOK, finish("a was found")], toolkit(posted))
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "allowed"}})
    assert out["status"] == "COMPLETED", out.get("error")
    model.assert_consumed()
    shown = " ".join(str(m.content) for m in model.calls[-1])
    assert "This is the last phase" in shown and "final result" in shown


def test_calls_of_a_later_phase_move_the_run_there_on_that_phases_path(tmp_path: Path) -> None:
    """A model that skips the phases' finish: its post while collecting closes collect and
    analyze and runs in publish, through the approval node; a reply mixing phases stays."""
    posted = Counter()
    replies = [LOOK, calls(("post", {"item": "a"})), finish("posted a")]
    app, model = build(tmp_path, "hybrid", replies, toolkit(posted))
    cfg = {"configurable": {"thread_id": "jump"}}
    out = app.invoke({"task": TASK}, cfg)
    [pause] = out["__interrupt__"]
    assert pause.value["tool"] == "post" and app.get_state(cfg).values["phase"] == "publish"
    assert app.get_state(cfg).values["status"] == "WAITING" and posted.effects == []
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
    model.assert_consumed()
    assert out["status"] == "COMPLETED" and posted.effects == ["a"]

    mixed = [calls(("look", {"item": "a"}), ("post", {"item": "b"})), finish("looked")]
    task = {**READ_ONLY, "allowed_actions": ["look", "post"], "budgets": {"tool_calls": 4}}
    app, model = build(
        tmp_path / "mixed", "hybrid", [*mixed, finish("a was found")], toolkit(posted)
    )
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "mixed"}})
    model.assert_consumed()
    refused = [r for r in out["results"].values() if r["tool_name"] == "post"]
    assert [r["status"] for r in refused] == ["DENIED"] and posted.effects == ["a"]
    # collect's finish closed the phase: the model is told so, not "not executed"
    shown = " ".join(str(m.content) for m in model.calls[-1])
    assert "phase collect closed" in shown and "not executed" not in shown
