"""Which request an input makes: its task, or its last human message; and whether a
finished thread was asked something new."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from execgraph.nodes.run_input import last_human, new_request, read_request, run_seq

FRAME = {"budgets": {"tool_calls": 5}, "allowed_actions": ["look"], "actor": {"user_id": "u"}}


def test_the_last_human_message_is_the_goal_of_a_task_without_one() -> None:
    messages = [HumanMessage("old", id="h1"), AIMessage("hm"), HumanMessage("new", id="h2")]
    request = read_request({"messages": messages, "task": FRAME})
    assert request.spec == {**FRAME, "goal": "new"} and request.from_message
    assert request.admitted["message"] == "h2" and request.admitted["seq"] == 1
    assert last_human(messages) is messages[2]


def test_a_tasks_own_goal_wins() -> None:
    request = read_request({"messages": [HumanMessage("chat", id="h")], "task": {"goal": "g"}})
    assert request.spec == {"goal": "g"} and not request.from_message


def test_nothing_asked_is_an_empty_request() -> None:
    assert read_request({}).spec == {}


def _finished(task: dict[str, Any], *messages: Any) -> dict[str, Any]:
    request = read_request({"task": task, "messages": list(messages)})
    state = {"task": request.spec, "messages": list(messages), "admitted": request.admitted}
    return state


def test_the_same_input_again_asks_the_same_again() -> None:
    again = new_request(_finished({"goal": "g"}))
    assert again is not None and again.spec == {"goal": "g"} and again.seq == 2
    again = new_request(_finished(FRAME, HumanMessage("q", id="h")))
    assert again is not None and again.spec == {**FRAME, "goal": "q"} and again.seq == 2


def test_a_new_human_message_is_the_next_goal_in_the_threads_frame() -> None:
    task = {**FRAME, "goal": "g", "success_checks": [{"kind": "output_contains", "value": "x"}]}
    state = _finished(task)
    state["messages"] = [HumanMessage("and now?", id="h9")]
    request = new_request(state)
    assert request is not None and request.from_message and request.seq == 2
    assert request.spec == {**FRAME, "goal": "and now?"}  # the old goal's checks stay behind


def test_a_changed_task_is_the_next_request() -> None:
    state = _finished({"goal": "g"})
    state["task"] = {"goal": "h"}
    request = new_request(state)
    assert request is not None and request.spec == {"goal": "h"} and request.seq == 2
    assert run_seq({"admitted": request.admitted}) == 2


def test_a_thread_admitted_before_requests_were_recorded_keeps_its_contract() -> None:
    assert new_request({"task": {"goal": "other"}, "messages": []}) is None
    assert run_seq({}) is None and run_seq({"admitted": {"seq": 1}}) is None


def test_a_task_sent_with_the_new_message_frames_it() -> None:
    state = _finished({"goal": "g"})
    checks = [{"kind": "output_contains", "value": "x"}]
    state["task"] = {"success_checks": checks}
    state["messages"] = [HumanMessage("next", id="h2")]
    request = new_request(state)
    assert request is not None and request.spec == {"success_checks": checks, "goal": "next"}
