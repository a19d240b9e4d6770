"""The rules every engine applies where it resumes a run: answers bound to what is pending
and to the arguments shown; a run id bound to one task."""

from __future__ import annotations

import pytest

from execgraph.engines.advance import check_task
from execgraph.engines.answers import approve, binding_problem, edit, reply
from execgraph.engines.spec import RunView
from execgraph.state.errors import UsageError

PAY = {"kind": "approval", "call_id": "t1.c0", "tool": "pay", "args_hash": "a" * 64}
ASK = {"kind": "question", "question": "which?"}
VIEW = RunView("r1", "WAITING", interrupts=[{"id": "i1", "value": PAY}, {"id": "i2", "value": ASK}])


def test_an_approval_is_bound_to_the_hash_shown_or_refused() -> None:
    assert approve(VIEW) == {"i1": {"action": "approve", "approver": "", "args_hash": "a" * 64}}
    assert approve(VIEW, "t1.c0", "bob", args_hash="aaaaaaaa")["i1"]["args_hash"] == "a" * 64
    with pytest.raises(UsageError, match="changed since it was shown"):
        approve(VIEW, args_hash="bbbbbbbbbbbb")
    with pytest.raises(UsageError, match="at least 8 hex digits"):
        edit(VIEW, {"to": "x"}, args_hash="aaa")
    assert reply(VIEW, "this one") == {"i2": {"answer": "this one"}}  # a question: no hash


def test_the_one_rule_refuses_unknown_ids_and_changed_calls() -> None:
    pending = VIEW.interrupts
    assert binding_problem(pending, {"i1": {"action": "approve", "args_hash": "a" * 64}}) == ""
    assert binding_problem(pending, {"i1": {"action": "approve"}}) == ""  # bound elsewhere
    assert "changed since" in binding_problem(pending, {"i1": {"args_hash": "b" * 64}})
    assert "no pending interrupt" in binding_problem(pending, {"i9": {}})
    assert "no pending interrupt" in binding_problem(pending, {})


def test_a_thread_holding_another_task_refuses_it() -> None:
    check_task("r1", {}, {"goal": "pay bob"})  # never started: anything starts it
    check_task(
        "r1", {"task": {"goal": "pay bob", "budgets": {}}}, {"budgets": {}, "goal": "pay bob"}
    )
    check_task("r1", {"task": {"goal": "pay bob"}}, None)  # answers and resumes name none
    with pytest.raises(UsageError, match="already holds another task"):
        check_task("r1", {"task": {"goal": "pay bob"}}, {"goal": "pay carol"})
