"""A thread is a conversation, as with ``create_agent``: the model sees what the user said
before (an image they sent too), the developer's system prompt reaches it beside the
runtime's rules, and invoking a finished thread again runs it again.

Each journey runs execgraph and ``create_agent`` on the same scripted OpenAI-compatible
server and reads what the model was sent (the recorded request bodies).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from execgraph.state.errors import UsageError
from tests.journeys.everyday import TOOLS, agent, cfg
from tests.support.openai_server import OpenAIServer, text

RUNTIME_RULE = "untrusted DATA"  # a line of the runtime's own rules in its system message


def _said(server: OpenAIServer, n: int, role: str) -> list[str]:
    """What request ``n`` sent the model in messages of ``role``."""
    return [str(m.get("content")) for m in server.requests[n].body["messages"] if m["role"] == role]


def _graphs(chat_model: Callable[..., ChatOpenAI], **kwargs: Any) -> list[tuple[str, Any]]:
    return [
        ("execgraph", build_graph("react", model=chat_model(), tools=TOOLS, **kwargs)),
        ("create_agent", agent(chat_model())),
    ]


def test_the_model_sees_what_the_user_said_before(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    for name, app in _graphs(chat_model):
        first = len(openai_server.requests)
        openai_server.add(text("Nice to meet you, Ann."), text("Your name is Ann."))
        app.invoke({"messages": [HumanMessage("Hi, my name is Ann.")]}, cfg(name))
        out = app.invoke({"messages": [HumanMessage("What is my name?")]}, cfg(name))
        assert out["messages"][-1].content == "Your name is Ann.", name
        said = _said(openai_server, first + 1, "user")
        assert any("my name is Ann" in s for s in said), (name, said)
        assert any(
            "Nice to meet you, Ann." in s for s in _said(openai_server, first + 1, "assistant")
        )
        assert "What is my name?" in said[-1] or any("What is my name?" in s for s in said)
    assert not openai_server.unexpected


def test_a_system_prompt_reaches_the_model_beside_the_runtimes_rules(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(text("Arr, hello."))
    app = build_graph(
        "react", model=chat_model(), tools=TOOLS, system_prompt="Answer like a pirate."
    )
    out = app.invoke({"messages": [HumanMessage("hi")]}, cfg("pirate"))
    assert out["status"] == "COMPLETED"
    [system] = _said(openai_server, 0, "system")
    assert "Answer like a pirate." in system and RUNTIME_RULE in system

    openai_server.add(text("Arr, hello."))
    agent(chat_model(), system_prompt="Answer like a pirate.").invoke(
        {"messages": [HumanMessage("hi")]}, cfg("agent")
    )
    assert _said(openai_server, 1, "system") == ["Answer like a pirate."]
    with pytest.raises(UsageError, match="system_prompt"):
        build_graph("react", model=chat_model(), tools=TOOLS, system_prompt=["x"])  # type: ignore[arg-type]


def test_a_leading_system_message_is_the_developers_instructions_for_the_thread(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    french = "Always answer in French."
    for name, app in _graphs(chat_model):
        first = len(openai_server.requests)
        openai_server.add(text("Bonjour !"), text("Il fait beau."))
        app.invoke({"messages": [SystemMessage(french), HumanMessage("hi")]}, cfg(name))
        app.invoke({"messages": [HumanMessage("How is the weather?")]}, cfg(name))
        for n in (first, first + 1):  # the thread's next turn still has it
            system = _said(openai_server, n, "system")
            assert any(french in s for s in system), (name, n, system)
            if name == "execgraph":  # one system message: the runtime's, with it inside
                assert len(system) == 1 and RUNTIME_RULE in system[0]
    assert not openai_server.unexpected


def test_invoking_a_finished_thread_with_the_same_input_runs_it_again(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    for name, app in _graphs(chat_model):
        before = len(openai_server.requests)
        openai_server.add(text("First answer."), text("Second answer."))
        ask = {"messages": [HumanMessage("Tell me something.")]}
        app.invoke(ask, cfg(name))
        again = app.invoke(ask, cfg(name))  # the same input, the same message object
        assert again["messages"][-1].content == "Second answer.", name
        assert len(openai_server.requests) == before + 2  # the model was asked again
        if name == "execgraph":
            assert again["status"] == "COMPLETED" and again["output"] == "Second answer."
            assert again["budget"]["used"]["model_calls"] == 1  # its own, fresh budget
    task = {"task": {"goal": "Tell me something."}}
    openai_server.add(text("One."), text("Two."))
    app = build_graph("react", model=chat_model(), tools=TOOLS)
    assert app.invoke(task, cfg("task"))["output"] == "One."
    assert app.invoke(task, cfg("task"))["output"] == "Two."  # a task again: asked again
    assert not openai_server.unexpected


PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _images(server: OpenAIServer, n: int) -> list[str]:
    """The image URLs request ``n`` sent the model, in order."""
    return [
        block["image_url"]["url"]
        for m in server.requests[n].body["messages"]
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "image_url"
    ]


def test_an_image_the_user_sends_reaches_the_model_and_stays_in_the_conversation(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    look = HumanMessage(
        [
            {"type": "text", "text": "What is in this image?"},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ]
    )
    for n, (name, app) in enumerate(_graphs(chat_model)):
        openai_server.add(text("A red dot."), text("Yes, a red dot."))
        app.invoke({"messages": [look]}, cfg(f"image-{name}"))
        app.invoke({"messages": [HumanMessage("Are you sure?")]}, cfg(f"image-{name}"))
        assert _images(openai_server, 2 * n) == [PIXEL], name  # with its question
        assert _images(openai_server, 2 * n + 1) == [PIXEL], name  # and in the next turn
    assert "What is in this image?" in str(openai_server.requests[0].body["messages"])

    # an image alone asks about the image
    openai_server.add(text("A red dot."))
    alone = HumanMessage([{"type": "image_url", "image_url": {"url": PIXEL}}])
    app = build_graph("react", model=chat_model(), tools=TOOLS)
    out = app.invoke({"messages": [alone]}, cfg("image-alone"))
    assert out["status"] == "COMPLETED" and out["output"] == "A red dot."
    assert _images(openai_server, 4) == [PIXEL]
    assert not openai_server.unexpected
