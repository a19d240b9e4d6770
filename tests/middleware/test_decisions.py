"""Approval answers in execgraph's shape and HumanInTheLoopMiddleware's, one decision each,
read by one reader: the graphs' approvals and ExecutorMiddleware's refuse the same answers
with the same words."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Interrupt
from pydantic import TypeAdapter, ValidationError

from execgraph.middleware.decisions import decision_schema
from execgraph.nodes.executor.decisions import read_decision
from execgraph.nodes.executor.stages.approval import check_resume
from execgraph.state.contracts import ApprovalDecision
from execgraph.state.errors import UsageError


@pytest.mark.parametrize(
    ("answer", "decision"),
    [
        ("approve", ApprovalDecision(action="approve")),
        ("reject", ApprovalDecision(action="reject")),
        ({"action": "reject", "reason": "no"}, ApprovalDecision(action="reject", reason="no")),
        (
            {"action": "edit", "arguments": {"to": "b"}, "approver": "ann"},
            ApprovalDecision(action="edit", arguments={"to": "b"}, approver="ann"),
        ),
        ({"type": "approve"}, ApprovalDecision(action="approve")),
        ({"type": "reject", "message": "no"}, ApprovalDecision(action="reject", reason="no")),
        (
            {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "b"}}},
            ApprovalDecision(action="edit", arguments={"to": "b"}),
        ),
        ({"decisions": [{"type": "approve"}]}, ApprovalDecision(action="approve")),
    ],
)
def test_each_shape_reads_as_one_decision(answer: Any, decision: ApprovalDecision) -> None:
    assert read_decision(answer, "send_email") == decision


REFUSED: list[tuple[Any, str]] = [
    ({"type": "edit", "edited_action": {"name": "pay", "args": {}}}, "not the tool"),
    ({"type": "edit", "edited_action": {"name": "send_email", "args": [1]}}, "as an object"),
    ({"type": "edit"}, "edited_action"),
    ({"type": "respond", "message": "ok"}, "respond"),
    ({"decisions": []}, "exactly one"),
    ({"decisions": [{"type": "approve"}] * 2}, "exactly one"),
    ({"action": "edit"}, "as an object"),
    ({"action": "approve", "arguments": "x"}, "invalid arguments"),
    ({"note": "ok"}, '"action" or "type"'),
    ("edit", "as text"),
    ({"decisions": [{"type": "approve"}], "note": "x"}, "exactly one"),
    ({"type": "approve", "note": "x"}, "only the keys"),
    ({"type": "reject", "message": 3}, "must be text"),
    (None, "got NoneType"),
]


@pytest.mark.parametrize(("answer", "why"), REFUSED)
def test_anything_else_is_refused_saying_what_to_send(answer: Any, why: str) -> None:
    with pytest.raises(UsageError, match="not an approval decision") as raised:
        read_decision(answer, "send_email")
    assert why in str(raised.value)
    assert "HumanInTheLoopMiddleware" in str(raised.value)


@pytest.mark.parametrize(("answer", "why"), REFUSED)
def test_the_graphs_and_the_middleware_refuse_an_answer_in_the_same_words(
    answer: Any, why: str
) -> None:
    asked = Interrupt(value={"call_id": "c1", "tool": "send_email", "args_hash": "h"}, id="i")
    with pytest.raises(UsageError) as by_graph:  # a graph's resume, checked before it runs
        check_resume([asked], answer)
    with pytest.raises(ValidationError) as by_middleware:  # the middleware's interrupt schema
        TypeAdapter(decision_schema("send_email")).validate_python(answer)
    assert why in str(by_graph.value)
    assert str(by_graph.value) in str(by_middleware.value)


HOSTILE = "\x1b]0;owned\x07"


@pytest.mark.parametrize(
    "answer",
    [
        {"type": "edit", "edited_action": {"name": HOSTILE, "args": {}}},
        {"action": HOSTILE},
        {"type": "approve", HOSTILE: 1},
        HOSTILE,
    ],
)
def test_a_refusal_does_not_echo_the_answer(answer: Any) -> None:
    asked = Interrupt(value={"call_id": "c1", "tool": "send_email", "args_hash": "h"}, id="i")
    with pytest.raises(UsageError) as raised:
        check_resume([asked], answer)
    assert "\x1b" not in str(raised.value) and "owned" not in str(raised.value)
