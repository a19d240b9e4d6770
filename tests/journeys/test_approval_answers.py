"""A person's answer to an approval is read, or refused out loud; never a silent "no".

``send_email`` declares nothing, so each call waits for a person. An answer execgraph
cannot read (``True``, ``{"action": "yes"}``, a wrong interrupt id) raises a
``UsageError`` naming the accepted shapes and leaves the run WAITING, the approval still
answerable. ``HumanInTheLoopMiddleware``'s shape (``{"decisions": [{"type": ...}]}``),
which ``create_agent`` users already send, is read: approve, reject with a message, and
edit with ``edited_action`` (the arguments may change, the tool may not).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.types import Command

from execgraph import build_graph
from execgraph.state.errors import UsageError
from tests.journeys.everyday import SENT, TOOLS, agent, cfg, fresh
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(120)

ASK = {"messages": [HumanMessage("Email ann@example.com that it is sunny.")]}
EMAIL = {"to": "ann@example.com", "body": "sunny"}
WRONG_ID = "0123456789abcdef0123456789abcdef"


def _paused(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], thread: str
) -> tuple[Any, str]:
    fresh()
    openai_server.add(tool_calls(tool_call("send_email", EMAIL)), text("Done."))
    app = build_graph("react", model=chat_model(), tools=TOOLS)
    [asked] = app.invoke(ASK, cfg(thread))["__interrupt__"]
    return app, asked.id


@pytest.mark.parametrize(
    "bad",
    [True, {"action": "yes"}, "yes", {WRONG_ID: {"action": "approve"}}, {"decisions": []}],
    ids=["true", "action-yes", "yes", "wrong-id", "no-decision"],
)
def test_an_answer_execgraph_cannot_read_raises_and_the_run_still_waits(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], bad: Any
) -> None:
    app, asked = _paused(openai_server, chat_model, "bad")
    with pytest.raises(UsageError) as refused:
        app.invoke(Command(resume=bad), cfg("bad"))
    assert "decisions" in str(refused.value) or "no pending interrupt" in str(refused.value)
    snapshot = app.get_state(cfg("bad"))
    assert snapshot.values["status"] == "WAITING" and [i.id for i in snapshot.interrupts] == [asked]
    assert SENT == []

    out = app.invoke(Command(resume={asked: {"action": "approve"}}), cfg("bad"))  # answerable
    assert out["status"] == "COMPLETED", out.get("error")
    assert SENT == ["ann@example.com"] and not openai_server.unexpected


def test_human_in_the_loop_middlewares_decisions_are_read(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    app, _ = _paused(openai_server, chat_model, "hitl")
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg("hitl"))
    assert out["status"] == "COMPLETED" and SENT == ["ann@example.com"]

    app, _ = _paused(openai_server, chat_model, "hitl-no")
    no = {"decisions": [{"type": "reject", "message": "not today"}]}
    out = app.invoke(Command(resume=no), cfg("hitl-no"))
    assert SENT == [] and out["results"]["t1.c0"]["status"] == "DENIED"
    assert "not today" in out["results"]["t1.c0"]["error"]["message"]

    app, _ = _paused(openai_server, chat_model, "hitl-edit")
    renamed = {"name": "get_weather", "args": {"city": "Paris"}}
    with pytest.raises(UsageError, match="not the tool"):
        app.invoke(
            Command(resume={"decisions": [{"type": "edit", "edited_action": renamed}]}),
            cfg("hitl-edit"),
        )
    assert app.get_state(cfg("hitl-edit")).values["status"] == "WAITING"
    edited = {"name": "send_email", "args": {"to": "bob@example.com", "body": "sunny"}}
    edit = {"decisions": [{"type": "edit", "edited_action": edited}]}
    out = app.invoke(Command(resume=edit), cfg("hitl-edit"))
    while out.get("__interrupt__"):  # an edit is a new request: asked again
        out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg("hitl-edit"))
    assert SENT == ["bob@example.com"] and out["status"] == "COMPLETED", out.get("error")

    fresh()  # the same answer, to create_agent with HumanInTheLoopMiddleware
    openai_server.add(tool_calls(tool_call("send_email", EMAIL)), text("Done."))
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send_email": True})
    graph = agent(chat_model(), middleware=[hitl])
    assert graph.invoke(ASK, cfg("agent"))["__interrupt__"]
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg("agent"))
    assert SENT == ["ann@example.com"] and not openai_server.unexpected
