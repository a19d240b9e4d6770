"""A tool's own question (``interrupt()`` inside a LangGraph ``@tool``) is a wait with a
deadline like the others: stamped by the store's clock from the task's wait rule for the
tool, shown in the run's status, and ended by its expiry policy (reject, cancel,
escalate) when the run is resumed past it. The clock is advanced, never slept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from rich.console import Console

from execgraph import build_graph
from execgraph.cli.approvals import wait_summary
from execgraph.cli.render import render_status, render_waiting
from execgraph.engines.advance import view_of
from execgraph.engines.waits import expired_answers, waits_of
from execgraph.eval.metrics import run_metrics
from execgraph.nodes.cancel import cancel_requested
from execgraph.state.events import EventType
from execgraph.testing import ScriptedChatModel
from tests.nodes.test_waits import _cfg, _Clock, _task

published: list[str] = []


@tool
def publish(doc: str) -> str:
    """Publish a document once the editor agrees."""
    answer = interrupt({"question": f"Publish {doc}?"})
    published.append(f"{doc}: {answer}")
    return f"{doc}: {answer}"


publish.metadata = {"effect": "write"}

_CALL = {"tool_calls": [{"name": "publish", "args": {"doc": "q3.md"}, "id": "p"}]}
_FINISH = {"tool_calls": [{"name": "finish", "args": {"output": "done"}, "id": "f"}]}


def _app(tmp_path: Path) -> tuple[Any, _Clock]:
    store = _Clock(tmp_path / "exec.db")
    app = build_graph(
        "react",
        model=ScriptedChatModel([_CALL, _FINISH]),
        tools=[publish],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app, store


def _result(out: dict[str, Any]) -> dict[str, Any]:
    [result] = out["results"].values()
    return dict(result)


def test_a_tools_question_has_a_deadline_shown_in_the_status(tmp_path: Path) -> None:
    app, store = _app(tmp_path)
    out = app.invoke(_task(tools={"publish": {"timeout_s": 60}}), _cfg("t1"))
    [asked] = out["__interrupt__"]
    assert asked.value == {"question": "Publish q3.md?"}  # the tool's own value, as asked
    view = view_of(app, "t1")
    [item] = view.interrupts
    wait = item["wait"]
    assert wait["kind"] == "tool" and wait["tool"] == "publish" and wait["on_expiry"] == "reject"
    assert wait["expires_at"] == wait["asked_at"] + 60  # the task's rule for the tool
    [shown] = waits_of(view)
    assert shown.until == wait["expires_at"] and "publish's question" in shown.what
    line = wait_summary(item)
    assert line.startswith("an answer to publish's question: ") and "Publish q3.md?" in line
    assert " until " in line and line.endswith("(then reject)")
    assert expired_answers(view, store.clock()) == {}
    assert expired_answers(view, wait["expires_at"] + 1) == {asked.id: {"expired": True}}
    console = Console(record=True, width=200)
    render_status(console, view)  # what `execgraph status` prints
    printed = console.export_text()
    assert "waiting for an answer to publish's question: " in printed and "(then reject)" in printed
    console = Console(record=True, width=200)
    render_waiting(console, view.run_id, view.interrupts)  # what `execgraph run` ends with
    printed = console.export_text()
    assert "- an answer to publish's question: " in printed and "(then reject)" in printed


def test_an_answer_in_time_reaches_the_tool_and_counts_as_waited(tmp_path: Path) -> None:
    published.clear()
    app, store = _app(tmp_path)
    app.invoke(_task(timeout_s=60), _cfg("t2"))
    store.offset = 59
    out = app.invoke(Command(resume="yes"), _cfg("t2"))
    assert out["status"] == "COMPLETED" and _result(out)["data"] == "q3.md: yes"
    [ended] = store.events("t2", types=[EventType.WAIT_ENDED])
    assert ended.payload["how"] == "answered" and ended.payload["kind"] == "tool"
    assert run_metrics(store.events("t2")).wait_s >= 59


def test_an_expired_question_is_rejected_and_the_call_did_not_complete(tmp_path: Path) -> None:
    published.clear()
    app, store = _app(tmp_path)
    app.invoke(_task(timeout_s=60), _cfg("t3"))
    store.offset = 61
    out = app.invoke(Command(resume="yes"), _cfg("t3"))  # too late: does not count
    assert published == [] and out["status"] != "WAITING"
    result = _result(out)
    assert result["outcome"] == "failed" and result["error"]["type"] == "WaitExpired"
    assert "expired unanswered" in result["error"]["message"]
    assert result["side_effect"]["summary"].startswith("interrupted at its own question")
    [ended] = store.events("t3", types=[EventType.WAIT_ENDED])
    assert ended.payload["how"] == "expired: reject"


def test_an_expired_question_can_cancel_the_call_and_the_run(tmp_path: Path) -> None:
    published.clear()
    app, store = _app(tmp_path)
    app.invoke(_task(tools={"publish": {"timeout_s": 30, "on_expiry": "cancel"}}), _cfg("t4"))
    store.offset = 31
    out = app.invoke(Command(resume={"expired": True}), _cfg("t4"))
    assert published == [] and out["status"] == "CANCELLED" and cancel_requested(store, "t4")
    assert _result(out)["outcome"] == "cancelled"


@pytest.mark.parametrize("by_id", [True, False], ids=["answer-by-id", "plain-answer"])
def test_an_expired_question_is_escalated_once_then_answered(tmp_path: Path, by_id: bool) -> None:
    published.clear()
    app, store = _app(tmp_path)
    waits = {"timeout_s": 30, "on_expiry": "escalate", "escalate_to": "the editor in chief"}
    [first] = app.invoke(_task(**waits), _cfg("t5"))["__interrupt__"]
    store.offset = 31
    late = {first.id: "yes"} if by_id else "yes"
    out = app.invoke(Command(resume=late), _cfg("t5"))  # too late: it does not count
    [again] = out["__interrupt__"]
    assert again.value == first.value and published == []  # the tool's question, again
    wait = view_of(app, "t5").interrupts[0]["wait"]
    assert wait["escalated_to"] == "the editor in chief" and wait["on_expiry"] == "reject"
    assert wait["asked_at"] >= store.clock() - 1 and wait["expires_at"] == wait["asked_at"] + 30
    in_time = {again.id: "ok"} if by_id else "ok"
    out = app.invoke(Command(resume=in_time), _cfg("t5"))  # within the new deadline
    assert out["status"] == "COMPLETED" and published == ["q3.md: ok"]


def test_an_escalated_question_that_expires_too_is_rejected(tmp_path: Path) -> None:
    published.clear()
    app, store = _app(tmp_path)
    app.invoke(_task(timeout_s=30, on_expiry="escalate"), _cfg("t6"))
    store.offset = 31
    app.invoke(Command(resume="late"), _cfg("t6"))
    store.offset = 100
    out = app.invoke(Command(resume="late again"), _cfg("t6"))
    assert published == [] and _result(out)["error"]["type"] == "WaitExpired"


def test_a_cancel_ends_a_tools_question_without_running_the_tool_again(tmp_path: Path) -> None:
    from execgraph.engines.advance import Step, advance

    published.clear()
    app, store = _app(tmp_path)
    app.invoke(_task(tools={"publish": {"timeout_s": 60}}), _cfg("c1"))
    view = advance(app, "c1", Step(cancel="the editor left"))
    assert view.status == "CANCELLED"
    assert published == []  # the cancel's note is no answer: the tool did not go on
    [ended] = store.events("c1", types=[EventType.WAIT_ENDED])
    assert ended.payload["how"] == "cancelled"
    assert store.pending("c1") == []  # no record is left paused
    [record] = store.committed("c1")
    assert record.result is not None and record.result["outcome"] == "cancelled"
    assert not record.result["side_effect"]["committed"]
