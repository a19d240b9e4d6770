"""A turn's messages: the model's reply, and the answers to calls no tool answered."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from execgraph.nodes.conversation import NOT_EXECUTED, ai_message, closing, unanswered
from execgraph.state.contracts import RunStatus


def _reply(*names: str) -> AIMessage:
    calls = [{"name": n, "args": {}, "id": f"id-{n}"} for n in names]
    return AIMessage("", id="ai", tool_calls=calls)


def _state(*messages: Any, **rest: Any) -> dict[str, Any]:
    return {"messages": list(messages), **rest}


def test_a_reply_keeps_its_own_id_or_gets_the_turns() -> None:
    assert ai_message(AIMessage("x", id="run-1"), "r", "t1").id == "run-1"
    given = AIMessage("x")
    assert ai_message(given, "r", "t1").id == "ai:r:t1" and given.id is None


def test_a_rejected_finish_is_answered_with_the_note_the_model_reads() -> None:
    note = {
        "id": "t1:finish",
        "turn": 1,
        "text": "finish rejected: no evidence",
        "tool_call_id": "id-finish",
    }
    [answer] = unanswered(_state(_reply("finish"), feedback=[note]), 2000)
    assert answer.tool_call_id == "id-finish" and answer.content == note["text"]
    assert answer.status == "success"


def test_a_call_with_nothing_said_for_it_was_not_executed() -> None:
    [answer] = unanswered(_state(_reply("abort")), 2000)
    assert answer.content == NOT_EXECUTED and answer.status == "error"


def test_a_result_without_its_message_is_answered_with_its_observation() -> None:
    result = {
        "call_id": "t1.c0",
        "tool_call_id": "id-look",
        "tool_name": "look",
        "status": "OK",
        "outcome": "succeeded",
        "data": "seen",
    }
    [answer] = unanswered(_state(_reply("look"), results={"t1.c0": result}), 2000)
    assert answer.id == "tool:t1.c0" and "seen" in str(answer.content)


def test_answered_calls_and_a_reply_before_a_new_request_are_left_alone() -> None:
    done = ToolMessage("ok", tool_call_id="id-look", id="tool:x")
    assert unanswered(_state(_reply("look"), done), 2000) == []
    assert unanswered(_state(_reply("finish"), HumanMessage("next")), 2000) == []
    assert unanswered(_state(HumanMessage("first")), 2000) == []
    assert unanswered(_state(), 2000) == []


def test_every_answer_names_its_tool_and_says_whether_it_is_a_control() -> None:
    [answer] = unanswered(_state(_reply("ask_user"), feedback=[_answered("id-ask_user")]), 2000)
    assert answer.name == "ask_user" and answer.artifact == {
        "tool_name": "ask_user",
        "tool_call_id": "id-ask_user",
        "outcome": "succeeded",
        "data": "The user answered: yes",
        "control": True,
    }
    [unrun] = unanswered(_state(_reply("look")), 2000)
    assert unrun.name == "look" and unrun.artifact["control"] is False
    assert unrun.artifact["outcome"] == "failed" and unrun.status == "error"


def test_a_runs_end_answers_every_open_call_of_its_last_reply() -> None:
    done = closing(_state(_reply("finish")), 2000, RunStatus.COMPLETED, "verified")
    assert [(m.name, m.content, m.status) for m in done] == [
        ("finish", "accepted: the run is COMPLETED", "success")
    ]
    [aborted] = closing(_state(_reply("abort")), 2000, RunStatus.FAILED, "aborted: no")
    assert aborted.content == "the run ended FAILED: aborted: no" and aborted.status == "success"
    stopped = closing(_state(_reply("finish", "look")), 2000, RunStatus.BUDGET_EXHAUSTED, "out")
    assert [(m.name, m.content, m.status) for m in stopped] == [
        ("finish", "the run ended BUDGET_EXHAUSTED: out", "error"),
        ("look", NOT_EXECUTED, "error"),
    ]
    note = {"id": "n", "turn": 1, "text": "finish rejected: x", "tool_call_id": "id-finish"}
    [rejected] = closing(_state(_reply("finish"), feedback=[note]), 2000, RunStatus.FAILED, "-")
    assert rejected.content == "finish rejected: x"
    assert (
        closing(_state(_reply("finish"), HumanMessage("next")), 2000, RunStatus.FAILED, "-") == []
    )


def _answered(tool_call_id: str) -> dict[str, Any]:
    return {"id": "a", "turn": 1, "text": "The user answered: yes", "tool_call_id": tool_call_id}
