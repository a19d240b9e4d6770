"""The four architectures are a drop-in swap for a model written for ``create_agent``.

The model here knows nothing of execgraph's control tools: it calls the user's tools and
answers in text, the script ``create_agent`` runs on. Every architecture takes it:
plan-and-execute runs the direct calls as its plan's waves and verifies the text answer;
hybrid moves to its publish phase when the model sends the email while collecting (the
email still passes hybrid's approval node); the workflow's stages are its tools in order.
The same number of model calls as ``create_agent``, the email sent once, after approval.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from tests.journeys.everyday import (
    ARCHITECTURES,
    SENT,
    TOOLS,
    agent,
    cfg,
    drive,
    fresh,
    unanswered_calls,
)
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

ASK = "What's the weather in Paris? Email it to ann@example.com."
ANSWER = "It is sunny in Paris; I emailed Ann."


def _script(server: OpenAIServer) -> None:
    server.add(
        tool_calls(tool_call("get_weather", {"city": "Paris"})),
        tool_calls(tool_call("send_email", {"to": "ann@example.com", "body": "Paris: sunny"})),
        text(ANSWER),
    )


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_a_create_agent_script_drives_every_architecture(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], arch: str
) -> None:
    fresh()
    _script(openai_server)
    app = build_graph(arch, model=chat_model(), tools=TOOLS)
    out = drive(app, {"messages": [HumanMessage(ASK)]}, cfg(arch))
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == ANSWER and SENT == ["ann@example.com"]
    assert out["verification"]["passed"] == ["get_weather succeeded", "send_email succeeded"]
    assert out["budget"]["used"]["model_calls"] == 3 and len(openai_server.requests) == 3
    assert unanswered_calls(out["messages"]) == []  # each call answered by its result
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].content == ANSWER

    fresh()
    _script(openai_server)
    answered = agent(chat_model()).invoke({"messages": [HumanMessage(ASK)]}, cfg("agent"))
    assert answered["messages"][-1].content == ANSWER and SENT == ["ann@example.com"]
    assert len(openai_server.requests) == 6 and not openai_server.unexpected


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_a_rejected_email_is_partial_in_every_architecture(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], arch: str
) -> None:
    fresh()
    _script(openai_server)
    app = build_graph(arch, model=chat_model(), tools=TOOLS)
    out = drive(app, {"messages": [HumanMessage(ASK)]}, cfg(arch), action="reject")
    assert SENT == [] and out["status"] == "PARTIAL", out.get("error")
    assert [f.split(" (")[0] for f in out["verification"]["failed"]] == [
        "send_email never succeeded"
    ]
    assert len(openai_server.requests) == 3 and not openai_server.unexpected


def test_plan_and_execute_still_takes_a_submitted_plan(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    """A model that plans is read as before: one submit_plan, one wave, then finish."""
    fresh()
    step = {"id": "w", "tool": "get_weather", "arguments": {"city": "Paris"}}
    openai_server.add(
        tool_calls(tool_call("submit_plan", {"steps": [step]})),
        tool_calls(tool_call("finish", {"output": "sunny"})),
    )
    app = build_graph("plan_execute", model=chat_model(), tools=TOOLS)
    out = app.invoke({"messages": [HumanMessage("Weather in Paris?")]}, cfg("planned"))
    assert out["status"] == "COMPLETED" and out["output"] == "sunny"
    assert out["plan"]["version"] == 1 and [s["id"] for s in out["plan"]["steps"]] == ["w"]
    assert unanswered_calls(out["messages"]) == []
