"""The same create_agent agent with ExecutorMiddleware and without (HumanInTheLoopMiddleware).

Re-running from the approval checkpoint (time travel) sends the email again without
the middleware and replays the recorded result with it; parallel calls with one approval
run each sibling once; an edit runs only the edited arguments; a malformed answer is a
clear error and leaves the run paused on the same question.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command
from pydantic import ValidationError

from tests.middleware.agents import Effects, agent, approval_checkpoint, call, reply

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-1"}}
EMAIL = reply(call("send_email", "call_mail", to="ann@example.org", body="hello"))


def _approve(with_executor: bool) -> Command[Any]:
    if with_executor:
        return Command(resume="approve")
    return Command(resume={"decisions": [{"type": "approve"}]})


@pytest.mark.parametrize(("with_executor", "emails"), [(True, 1), (False, 2)])
def test_a_rerun_from_the_approval_checkpoint_sends_the_email(
    tmp_path: Path, with_executor: bool, emails: int
) -> None:
    effects = Effects()
    home = tmp_path if with_executor else None
    app = agent(effects, [EMAIL, "sent it", "sent it"], home=home)
    paused = app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    assert paused["__interrupt__"]
    app.invoke(_approve(with_executor), CONFIG)
    assert len(effects.emails) == 1

    again = app.invoke(None, approval_checkpoint(app, CONFIG))  # time travel

    assert len(effects.emails) == emails
    assert "__interrupt__" not in again  # replayed, not asked again
    answers = [m for m in again["messages"] if m.type == "tool"]
    assert answers[-1].tool_call_id == "call_mail" and answers[-1].status == "success"


PARALLEL = reply(
    call("log_line", "call_a", line="a"),
    call("send_email", "call_mail", to="ann@example.org", body="hello"),
    call("log_line", "call_b", line="b"),
)


@pytest.mark.parametrize(("with_executor", "runs"), [(True, 1), (False, 2)])
def test_parallel_calls_with_one_approval_run_each_sibling_once(
    tmp_path: Path, with_executor: bool, runs: int
) -> None:
    effects = Effects()
    home = tmp_path if with_executor else None
    app = agent(effects, [PARALLEL, "done", "done"], home=home)
    paused = app.invoke({"messages": [("user", "log and email")]}, CONFIG)
    assert len(paused["__interrupt__"]) == 1
    done = app.invoke(_approve(with_executor), CONFIG)
    assert effects.runs == {"log_line:a": 1, "log_line:b": 1, "send_email:ann@example.org": 1}
    assert done["messages"][-1].content == "done"

    app.invoke(None, approval_checkpoint(app, CONFIG))  # time travel

    assert effects.runs["log_line:a"] == effects.runs["log_line:b"] == runs
    assert effects.runs["send_email:ann@example.org"] == runs


@pytest.mark.parametrize(
    "edit",
    [
        {
            "type": "edit",
            "edited_action": {
                "name": "send_email",
                "args": {"to": "bob@example.org", "body": "hi"},
            },
        },
        {"action": "edit", "arguments": {"to": "bob@example.org", "body": "hi"}},
    ],
    ids=["hitl-shape", "execgraph-shape"],
)
def test_an_edit_runs_only_the_edited_arguments(tmp_path: Path, edit: dict[str, Any]) -> None:
    effects = Effects()
    app = agent(effects, [EMAIL, "sent it", "sent it"], home=tmp_path)
    app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    app.invoke(Command(resume=edit), CONFIG)  # the edit is asked about again
    done = app.invoke(Command(resume="approve"), CONFIG)

    assert effects.emails == [{"to": "bob@example.org", "body": "hi"}]
    assert done["messages"][-1].content == "sent it"
    app.invoke(None, approval_checkpoint(app, CONFIG))  # and never again on a re-run
    assert effects.emails == [{"to": "bob@example.org", "body": "hi"}]


@pytest.mark.parametrize(
    "answer",
    [
        {"type": "edit", "edited_action": {"name": "log_line", "args": {"line": "x"}}},
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
        {"type": "respond", "message": "pretend it was sent"},
        {"action": "edit"},
        {"action": "maybe"},
        "yes",
        42,
    ],
    ids=[
        "edit-another-tool",
        "two-decisions",
        "respond",
        "edit-no-args",
        "bad-action",
        "text",
        "number",
    ],
)
def test_a_malformed_decision_is_a_clear_error_and_the_run_stays_paused(
    tmp_path: Path, answer: Any
) -> None:
    effects = Effects()
    app = agent(effects, [EMAIL, "sent it"], home=tmp_path)
    paused = app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    [question] = paused["__interrupt__"]

    with pytest.raises(ValidationError, match="not an approval decision"):
        app.invoke(Command(resume=answer), CONFIG)

    state = app.get_state(CONFIG)
    assert [i.id for i in state.interrupts] == [question.id]  # the same question, open
    assert effects.runs == {}
    done = app.invoke(Command(resume={"type": "approve"}), CONFIG)  # answered again
    assert effects.emails == [{"to": "ann@example.org", "body": "hello"}]
    assert done["messages"][-1].content == "sent it"


def test_a_rejection_never_runs_the_tool(tmp_path: Path) -> None:
    effects = Effects()
    app = agent(effects, [EMAIL, "did not send"], home=tmp_path)
    app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    done = app.invoke(Command(resume={"type": "reject", "message": "not now"}), CONFIG)

    assert effects.runs == {}
    answer = next(m for m in done["messages"] if m.type == "tool")
    assert answer.status == "error" and "ApprovalRejected" in answer.content


def test_two_approvals_in_one_turn_are_answered_each_by_its_interrupt_id(tmp_path: Path) -> None:
    effects = Effects()
    two = reply(
        call("send_email", "call_ann", to="ann@example.org", body="hello"),
        call("send_email", "call_bob", to="bob@example.org", body="hello"),
    )
    app = agent(effects, [two, "sent one"], home=tmp_path)
    paused = app.invoke({"messages": [("user", "email Ann and Bob")]}, CONFIG)
    asked = {i.value["arguments"]["to"]: i.id for i in paused["__interrupt__"]}
    assert sorted(asked) == ["ann@example.org", "bob@example.org"]

    answers = {asked["ann@example.org"]: "approve", asked["bob@example.org"]: {"type": "reject"}}
    done = app.invoke(Command(resume=answers), CONFIG)

    assert effects.emails == [{"to": "ann@example.org", "body": "hello"}]
    assert done["messages"][-1].content == "sent one"
