"""Waits with deadlines: a question, an awaited event and an approval each carry a
deadline stamped by the store's clock, and what their expiry does (reject, cancel,
escalate) happens when the run is next resumed past it. The clock is advanced, never
slept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph import build_graph, tool_spec
from execgraph.engines.spec import RunView
from execgraph.engines.waits import deliver, expired_answers, waits_of
from execgraph.nodes.cancel import cancel_requested
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel


class _Clock(SqliteExecutionStore):
    """A store whose clock the test moves forward (as hours pass for a waiting run)."""

    offset = 0.0

    def clock(self) -> float:
        return super().clock() + self.offset


def _ask(question: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "ask_user", "args": {"question": question}, "id": "q"}]}


def _finish(text: str = "done") -> dict[str, Any]:
    return {"tool_calls": [{"name": "finish", "args": {"output": text}, "id": "f"}]}


def _said(model: ScriptedChatModel) -> str:
    """What the model was shown on its last turn."""
    messages: list[BaseMessage] = model.calls[-1]
    return "\n".join(str(m.content) for m in messages)


paid: list[int] = []


@tool_spec(effect="irreversible")
def pay(amount: int) -> str:
    """Pay."""
    paid.append(amount)
    return "paid"


def _app(tmp_path: Path, replies: list[Any], **kw: Any) -> tuple[Any, _Clock, ScriptedChatModel]:
    store = _Clock(tmp_path / "exec.db")
    model = ScriptedChatModel(replies)
    app = build_graph(
        "react",
        model=model,
        tools=[pay],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
        **kw,
    )
    return app, store, model


def _cfg(run: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": run}}


def _task(**waits: Any) -> dict[str, Any]:
    return {"task": {"goal": "get it done", "waits": waits}}


def test_a_question_expires_by_the_store_clock_and_a_late_answer_does_not_count(
    tmp_path: Path,
) -> None:
    app, store, model = _app(tmp_path, [_ask("Which city?"), _finish()])
    out = app.invoke(_task(timeout_s=60), _cfg("q1"))
    [pending] = out["__interrupt__"]
    asked = pending.value
    assert asked["kind"] == "question" and asked["on_expiry"] == "reject"
    assert asked["expires_at"] == asked["asked_at"] + 60  # stamped by the store's clock
    store.offset = 61  # a minute passes on the store's clock
    out = app.invoke(Command(resume="Paris"), _cfg("q1"))
    assert "expired unanswered" in _said(model) and "Paris" not in _said(model)
    assert out["status"] not in ("WAITING", "CANCELLED")
    [ended] = store.events("q1", types=[EventType.WAIT_ENDED])
    assert ended.payload["how"] == "expired: reject"
    assert ended.payload["ended_at"] - ended.payload["asked_at"] >= 61  # the wait's time


def test_an_answer_in_time_counts(tmp_path: Path) -> None:
    app, store, model = _app(tmp_path, [_ask("Which city?"), _finish()])
    app.invoke(_task(timeout_s=60), _cfg("q2"))
    store.offset = 59
    app.invoke(Command(resume={"answer": "Paris"}), _cfg("q2"))
    assert "The user answered: Paris" in _said(model)


def test_an_expired_question_can_cancel_the_run(tmp_path: Path) -> None:
    app, store, _ = _app(tmp_path, [_ask("Which city?"), _finish()])
    app.invoke(_task(timeout_s=60, on_expiry="cancel"), _cfg("q3"))
    store.offset = 3600
    out = app.invoke(Command(resume={"expired": True}), _cfg("q3"))
    assert out["status"] == "CANCELLED" and cancel_requested(store, "q3")


def test_an_expired_question_is_escalated_once_then_rejected(tmp_path: Path) -> None:
    app, store, model = _app(tmp_path, [_ask("Ship it?"), _finish()])
    waits = {"timeout_s": 60, "on_expiry": "escalate", "escalate_to": "on-call lead"}
    first = app.invoke(_task(**waits), _cfg("q4"))["__interrupt__"][0].value
    store.offset = 61
    out = app.invoke(Command(resume={"expired": True}), _cfg("q4"))
    [again] = out["__interrupt__"]
    assert again.value["escalated_to"] == "on-call lead"
    assert again.value["asked_at"] >= first["expires_at"]  # a new deadline, from now
    assert again.value["expires_at"] == again.value["asked_at"] + 60
    store.offset = 100  # answered within the escalated deadline
    app.invoke(Command(resume={"answer": "yes"}), _cfg("q4"))
    assert "The user answered: yes" in _said(model)


def test_an_approval_waits_per_tool_and_its_expiry_cancels_the_run(tmp_path: Path) -> None:
    paid.clear()
    call = {"tool_calls": [{"name": "pay", "args": {"amount": 5}, "id": "p"}]}
    app, store, _ = _app(tmp_path, [call, _finish()])
    waits = {"timeout_s": 3600, "tools": {"pay": {"timeout_s": 30, "on_expiry": "cancel"}}}
    out = app.invoke(_task(**waits), _cfg("a1"))
    [pending] = out["__interrupt__"]
    assert pending.value["expires_at"] == pending.value["asked_at"] + 30  # the tool's rule
    assert pending.value["on_expiry"] == "cancel"
    store.offset = 31
    out = app.invoke(Command(resume="approve"), _cfg("a1"))  # too late: does not count
    assert paid == [] and out["status"] == "CANCELLED"
    [result] = out["results"].values()
    assert "expired unanswered" in result["error"]["message"]


def test_an_expired_approval_is_escalated_then_approved_in_time(tmp_path: Path) -> None:
    paid.clear()
    call = {"tool_calls": [{"name": "pay", "args": {"amount": 7}, "id": "p"}]}
    app, store, _ = _app(tmp_path, [call, _finish()])
    waits = {"timeout_s": 30, "on_expiry": "escalate", "escalate_to": "finance"}
    app.invoke(_task(**waits), _cfg("a2"))
    store.offset = 31
    out = app.invoke(Command(resume="approve"), _cfg("a2"))
    [again] = out["__interrupt__"]
    assert again.value["escalated_to"] == "finance" and again.value["on_expiry"] == "reject"
    assert "escalated to finance" in again.value["reason"]
    out = app.invoke(Command(resume="approve"), _cfg("a2"))
    assert paid == [7] and out["status"] == "COMPLETED"


def test_wait_for_an_event_offered_only_for_the_named_events(tmp_path: Path) -> None:
    wait = {"tool_calls": [{"name": "wait_for", "args": {"event": "paid"}, "id": "w"}]}
    app, store, model = _app(tmp_path, [wait, _finish()])
    out = app.invoke(_task(timeout_s=600, events=["paid"]), _cfg("w1"))
    assert "wait_for" in model.tools_offered[0]
    [pending] = out["__interrupt__"]
    assert pending.value["kind"] == "wait" and pending.value["event"] == "paid"
    view = RunView("w1", "WAITING", interrupts=[{"id": pending.id, "value": pending.value}])
    [shown] = waits_of(view)
    assert shown.what == "the event 'paid'" and shown.until == pending.value["expires_at"]
    with pytest.raises(UsageError, match="no event named 'shipped'"):
        deliver(view, "shipped")
    assert expired_answers(view, store.clock()) == {}
    assert expired_answers(view, shown.until + 1) == {pending.id: {"expired": True}}
    app.invoke(Command(resume=deliver(view, "paid", {"invoice": 12})), _cfg("w1"))
    assert "The event 'paid' arrived: {'invoice': 12}" in _said(model)


def test_wait_for_is_not_offered_without_named_events(tmp_path: Path) -> None:
    app, _, model = _app(tmp_path, [_finish()])
    app.invoke(_task(), _cfg("w2"))
    assert "wait_for" not in model.tools_offered[0]


def test_status_says_what_a_run_waits_for_since_and_until_when(tmp_path: Path) -> None:
    from execgraph.cli.approvals import interrupt_summary

    app, _, _ = _app(tmp_path, [_ask("Which city?"), _finish()])
    out = app.invoke(_task(timeout_s=60, on_expiry="cancel"), _cfg("s1"))
    line = interrupt_summary(out["__interrupt__"][0].value)
    assert line.startswith("an answer to: Which city?") and "waiting since " in line
    assert line.endswith("(then cancel)") and " until " in line


def test_metrics_count_the_time_a_run_waited(tmp_path: Path) -> None:
    from execgraph.eval.metrics import run_metrics

    app, store, _ = _app(tmp_path, [_ask("Which city?"), _finish()])
    app.invoke(_task(timeout_s=600), _cfg("m1"))
    store.offset = 90  # answered a minute and a half later, by the store's clock
    app.invoke(Command(resume={"answer": "Paris"}), _cfg("m1"))
    assert run_metrics(store.events("m1")).wait_s >= 90


def test_the_hybrid_publish_gate_applies_the_expiry_policy(tmp_path: Path) -> None:
    from tests.graph.test_hybrid_semantics import LOOK, POST_TWO, SAVE, TASK, finish, toolkit
    from tests.support.executor import Counter

    posted = Counter()
    replies = [LOOK, finish("looked"), SAVE, finish("saved"), POST_TWO, finish("posted a")]
    store = _Clock(tmp_path / "exec.db")
    app = build_graph(
        "hybrid",
        model=ScriptedChatModel(replies),
        tools=toolkit(posted),
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    cfg = _cfg("h1")
    waits = {"timeout_s": 60, "tools": {"post": {"timeout_s": 60, "on_expiry": "escalate"}}}
    [first] = app.invoke({"task": {**TASK, "waits": waits}}, cfg)["__interrupt__"]
    store.offset = 61
    [again] = app.invoke(Command(resume={first.id: "approve"}), cfg)["__interrupt__"]
    assert again.value["call_id"] == first.value["call_id"]  # asked again, escalated
    assert again.value["escalated_to"] == "another approver"
    store.offset = 200  # the escalated question expires too: refused, not posted
    out = app.invoke(Command(resume={again.id: "approve"}), cfg)
    [second] = out["__interrupt__"]  # the batch's other call, asked on its own
    assert second.value["arguments"] == {"item": "b"}
    out = app.invoke(Command(resume={second.id: "approve"}), cfg)  # in time
    assert posted.effects == ["b"]
    refused = out["results"][first.value["call_id"]]
    assert "expired unanswered" in refused["error"]["message"]


@pytest.mark.parametrize("asked", ["question", "event"])
def test_a_cancel_ends_a_wait_as_cancelled_not_answered(tmp_path: Path, asked: str) -> None:
    from execgraph.engines.advance import Step, advance

    wait = {"tool_calls": [{"name": "wait_for", "args": {"event": "paid"}, "id": "w"}]}
    app, store, model = _app(tmp_path, [_ask("Which city?") if asked == "question" else wait])
    app.invoke(_task(timeout_s=600, events=["paid"]), _cfg("c1"))
    view = advance(app, "c1", Step(cancel="the customer left"))
    assert view.status == "CANCELLED"
    [ended] = store.events("c1", types=[EventType.WAIT_ENDED])
    assert ended.payload["how"] == "cancelled"
    assert len(model.calls) == 1  # nothing was made up for the model to read
