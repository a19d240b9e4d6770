"""Approval answers in execgraph's shape and HumanInTheLoopMiddleware's, one decision each."""

from __future__ import annotations

from typing import Any

import pytest

from execgraph.middleware.decisions import read_decision
from execgraph.state.contracts import ApprovalDecision


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


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"type": "edit", "edited_action": {"name": "pay", "args": {}}}, "never the tool"),
        ({"type": "edit", "edited_action": {"name": "send_email", "args": [1]}}, "as an object"),
        ({"type": "edit"}, "edited_action"),
        ({"type": "respond", "message": "ok"}, "respond"),
        ({"decisions": []}, "exactly one"),
        ({"decisions": [{"type": "approve"}] * 2}, "exactly one"),
        ({"action": "edit"}, "as an object"),
        ({"action": "approve", "arguments": "x"}, "invalid arguments"),
        ({"note": "ok"}, '"action" or "type"'),
        ("edit", "as text"),
        (None, "got NoneType"),
    ],
)
def test_anything_else_is_refused_saying_what_to_send(answer: Any, why: str) -> None:
    with pytest.raises(ValueError, match="not an approval decision") as raised:
        read_decision(answer, "send_email")
    assert why in str(raised.value)
    assert "HumanInTheLoopMiddleware decision" in str(raised.value)


def test_a_refusal_does_not_echo_the_answer() -> None:
    hostile = {"type": "edit", "edited_action": {"name": "\x1b]0;owned\x07", "args": {}}}
    with pytest.raises(ValueError) as raised:
        read_decision(hostile, "send_email")
    assert "\x1b" not in str(raised.value) and "owned" not in str(raised.value)
