"""The ``messages`` output is a clean transcript: every tool call of every AI message is
answered by a ``ToolMessage`` naming its tool, the runtime's control tools (finish,
ask_user, abort, submit_plan, ...) are marked as such, the user's request stays in the
window however long the run, and the README quickstart's ``show()`` helper prints every
message the graph streams.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.types import Command

from execgraph import build_graph
from tests.journeys.everyday import TOOLS, agent, cfg, unanswered_calls
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

README = Path(__file__).resolve().parents[2] / "README.md"
TASK = {
    "goal": "What is the weather in the user's city?",
    "success_checks": [{"kind": "tool_succeeded", "target": "get_weather"}],
}


def _readme_show() -> Callable[[Any], None]:
    """The quickstart's ``show`` helper, as the README prints it."""
    found = re.search(r"^def show\(stream\):\n(?:    .*\n|\n)+", README.read_text(), re.M)
    assert found is not None, "the README's quickstart has no show() helper"
    scope: dict[str, Any] = {"ToolMessage": ToolMessage}
    exec(found.group(0), scope)  # the README's own code
    return scope["show"]  # type: ignore[no-any-return]


def _names(messages: list[Any]) -> dict[str, tuple[str | None, Any]]:
    return {m.tool_call_id: (m.name, m.artifact) for m in messages if isinstance(m, ToolMessage)}


def test_every_call_is_answered_and_control_tools_say_what_they_are(
    home: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.add(
        tool_calls(tool_call("ask_user", {"question": "Which city?"}, id="q")),
        tool_calls(tool_call("finish", {"output": "no idea"}, id="early")),
        tool_calls(tool_call("get_weather", {"city": "Paris"}, id="w")),
        tool_calls(tool_call("finish", {"output": "Sunny in Paris."}, id="done")),
    )
    show = _readme_show()
    app = build_graph("react", model=chat_model(), tools=TOOLS)
    show(app.stream({"task": TASK}, cfg("tx"), stream_mode="messages"))
    show(app.stream(Command(resume="Paris"), cfg("tx"), stream_mode="messages"))
    out = app.get_state(cfg("tx")).values
    assert out["status"] == "COMPLETED" and out["output"] == "Sunny in Paris."
    assert unanswered_calls(out["messages"]) == []
    answers = _names(out["messages"])
    assert {k: v[0] for k, v in answers.items()} == {
        "q": "ask_user",
        "early": "finish",
        "w": "get_weather",
        "done": "finish",
    }
    for call_id in ("q", "early", "done"):
        assert answers[call_id][1]["control"] is True
    assert answers["w"][1]["call_id"] == "t3.c0"  # a tool's answer carries its ToolResult
    assert answers["q"][1]["data"] == "The user answered: Paris"
    assert answers["early"][1]["data"].startswith("finish rejected")
    assert answers["done"][1]["outcome"] == "succeeded"
    printed = capsys.readouterr().out
    for line in (
        "[ask_user] succeeded: The user answered: Paris",
        "[finish] succeeded: finish rejected",
        "[get_weather] succeeded: Paris: sunny, 22 °C",
        "[finish] succeeded: accepted",
    ):
        assert line in printed, printed
    assert not openai_server.unexpected


def test_a_plan_a_request_for_a_new_one_and_an_abort_are_answered_too(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    step = {"id": "w", "tool": "get_weather", "arguments": {"city": "Paris"}}
    openai_server.add(
        tool_calls(tool_call("submit_plan", {"steps": [step]}, id="p")),
        tool_calls(tool_call("revise_plan", {"reason": "Rome, not Paris"}, id="r")),
        tool_calls(tool_call("abort", {"reason": "changed my mind"}, id="a")),
    )
    app = build_graph("plan_execute", model=chat_model(), tools=TOOLS)
    out = app.invoke({"task": TASK}, cfg("abort"))
    assert out["status"] == "FAILED" and unanswered_calls(out["messages"]) == []
    answers = _names(out["messages"])
    assert answers["p"][0] == "submit_plan" and answers["a"][0] == "abort"
    assert answers["r"][0] == "revise_plan"
    assert answers["r"][1]["data"] == "the model asked for a new plan: Rome, not Paris"
    assert answers["a"][1] == {
        "tool_name": "abort",
        "tool_call_id": "a",
        "outcome": "succeeded",
        "data": "the run ended FAILED: the planner aborted: changed my mind",
        "control": True,
    }


def test_the_users_request_stays_in_a_long_runs_window(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    cities = [f"City{i}" for i in range(24)]
    ask = "What is the weather in each of my 24 cities?"
    for name in ("execgraph", "create_agent"):
        openai_server.add(*(tool_calls(tool_call("get_weather", {"city": c})) for c in cities))
        openai_server.add(text("All sunny."))
        app = (
            build_graph("react", model=chat_model(), tools=TOOLS)
            if name == "execgraph"
            else agent(chat_model())
        )
        out = app.invoke({"messages": [HumanMessage(ask)]}, cfg(name))
        messages = out["messages"]
        assert isinstance(messages[0], HumanMessage) and messages[0].content == ask, name
        assert isinstance(messages[-1], AIMessage) and messages[-1].content == "All sunny."
        assert not isinstance(messages[1], ToolMessage)  # no answer without its call
    assert not openai_server.unexpected


def test_a_run_the_models_output_ends_answers_the_calls_it_left_open(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    broken = tool_calls(tool_call("get_weather", '{"city": "Par'))  # arguments not JSON
    openai_server.add(tool_calls(tool_call("finish", {"output": "?"}, id="early")), *[broken] * 3)
    app = build_graph("react", model=chat_model(), tools=TOOLS)
    out = app.invoke({"task": TASK}, cfg("broken"))
    assert out["status"] == "FAILED" and out["error"]["type"] == "ModelOutputError"
    assert unanswered_calls(out["messages"]) == []
    assert _names(out["messages"])["early"][1]["data"].startswith("finish rejected")
    assert not openai_server.unexpected
