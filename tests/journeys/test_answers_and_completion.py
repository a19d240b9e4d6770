"""A chat turn costs what it costs with ``create_agent``, and COMPLETED means the goal's
actions happened.

A bare goal (``{"messages": [...]}``, or a task without success checks) ends with the
model's first answer: a reply without tool calls is one model call, in every
architecture, as ``create_agent`` answers in one. The run's status says what its actions
came to: an email a person rejected, or a policy refused, never leaves a plain
``COMPLETED``; the verification names it. A task with checks rejects a wrong answer and
asks again, and a model repeating the same rejected answer is stopped by the loop guard,
not by the budget. ``ChatOpenAI`` against the scripted server, ordinary ``@tool``s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import ToolException, tool
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from execgraph.nodes.admission import DEFAULT_BUDGETS
from tests.journeys.everyday import (
    ARCHITECTURES,
    SENT,
    TOOLS,
    agent,
    cfg,
    drive,
    fresh,
    get_weather,
)
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

REPLY = "Hello! It is sunny in Paris today."
EMAIL = {"to": "ann@example.com", "body": "Paris: sunny"}


@tool
def book_table(restaurant: str) -> str:
    """Book a table."""
    raise ToolException(f"{restaurant} is fully booked")


book_table.metadata = {"effect": "write"}
book_table.handle_tool_error = True  # create_agent hands the message to the model too


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("ask", ["hi", "In one sentence, what is the weather in Paris?"])
def test_a_reply_without_tools_ends_the_run_in_one_model_call_as_with_create_agent(
    home: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    arch: str,
    ask: str,
) -> None:
    openai_server.add(text(REPLY))
    app = build_graph(arch, model=chat_model(), tools=TOOLS)
    out = app.invoke({"messages": [HumanMessage(ask)]}, cfg(f"chat-{arch}"))
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == REPLY and out["messages"][-1].content == REPLY
    assert out["budget"]["used"]["model_calls"] == 1 and len(openai_server.requests) == 1

    openai_server.add(text(REPLY))
    answered = agent(chat_model()).invoke({"messages": [HumanMessage(ask)]}, cfg("agent"))
    assert answered["messages"][-1].content == REPLY and len(openai_server.requests) == 2
    assert not openai_server.unexpected


def test_the_default_budgets_are_the_documented_ones(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(text(REPLY))
    out = build_graph("react", model=chat_model(), tools=TOOLS).invoke(
        {"messages": [HumanMessage("hi")]}, cfg("budgets")
    )
    assert out["contract"]["budgets"] == {"model_calls": 50, "tool_calls": 100}
    assert {k.value: v for k, v in DEFAULT_BUDGETS.items()} == out["contract"]["budgets"]
    assert "50 model calls and 100 tool calls" in " ".join(str(build_graph.__doc__).split())


@pytest.mark.parametrize("refusal", ["rejected by the person", "denied by a policy rule"])
def test_an_email_that_was_not_sent_never_leaves_a_plain_completed(
    home: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    refusal: str,
) -> None:
    fresh()
    openai_server.add(
        tool_calls(tool_call("get_weather", {"city": "Paris"})),
        tool_calls(tool_call("send_email", EMAIL)),
        text("It is sunny in Paris; I emailed Ann."),  # the model's claim
    )
    deny = refusal.startswith("denied")
    policy = [{"tool": "send_email", "decision": "deny"}] if deny else None
    app = build_graph("react", model=chat_model(), tools=TOOLS, policy=policy)
    ask = {"messages": [HumanMessage("Weather in Paris? Email it to ann@example.com.")]}
    out = drive(app, ask, cfg("email"), action="reject")
    assert SENT == []
    assert out["status"] == "PARTIAL", out.get("error")  # the weather was read; no email
    assert out["output"] == "It is sunny in Paris; I emailed Ann."  # the answer, as said
    verification = out["verification"]
    assert verification["accepted"] is False
    assert verification["passed"] == ["get_weather succeeded"]
    [unmet] = verification["failed"]
    assert unmet.startswith("send_email never succeeded (DENIED")
    assert out["open_items"] == [unmet] and "send_email" in out["error"]["message"]
    assert len(openai_server.requests) == 3 and not openai_server.unexpected


def test_an_answer_after_the_only_action_failed_ends_the_run_failed(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    script = (
        tool_calls(tool_call("book_table", {"restaurant": "Chez Ann"})),
        text("Sorry, Chez Ann is fully booked."),
    )
    openai_server.add(*script)
    app = build_graph("react", model=chat_model(), tools=[book_table])
    out = app.invoke({"messages": [HumanMessage("Book a table at Chez Ann.")]}, cfg("book"))
    assert out["status"] == "FAILED" and out["output"] == "Sorry, Chez Ann is fully booked."
    assert out["verification"]["failed"][0].startswith("book_table never succeeded")
    assert out["budget"]["used"]["model_calls"] == 2  # not the whole budget

    openai_server.add(*script)
    answered = agent(chat_model(), [book_table]).invoke(
        {"messages": [HumanMessage("Book a table at Chez Ann.")]}, cfg("agent")
    )
    assert answered["messages"][-1].content == "Sorry, Chez Ann is fully booked."
    assert len(openai_server.requests) == 4 and not openai_server.unexpected


def test_a_failed_read_is_no_unmet_action(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        raise ToolException(f"no city called {city}")

    lookup.metadata = {"effect": "read"}
    openai_server.add(
        tool_calls(tool_call("lookup", {"city": "Atlantis"})), text("There is no Atlantis.")
    )
    app = build_graph("react", model=chat_model(), tools=[lookup, get_weather])
    out = app.invoke({"messages": [HumanMessage("Weather in Atlantis?")]}, cfg("read"))
    assert out["status"] == "COMPLETED" and out["output"] == "There is no Atlantis."


def test_the_same_rejected_answer_again_is_stopped_by_the_loop_guard(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(*[text("I do not know.")] * 10)
    task = {
        "goal": "What is the weather in Paris?",
        "success_checks": [{"kind": "output_contains", "value": "sunny"}],
    }
    out = build_graph("react", model=chat_model(), tools=TOOLS).invoke({"task": task}, cfg("loop"))
    assert out["status"] == "FAILED"
    assert out["error"]["message"].startswith("no progress: the last 3 turns repeated")
    assert out["budget"]["used"]["model_calls"] == 4  # the first, then three repeats
    assert out["verification"]["accepted"] is False
