"""A structured final answer, as a ``create_agent`` user asks for one.

``response_format=Weather`` on ``build_graph`` and on ``create_agent`` (its
``ToolStrategy``), ``ChatOpenAI`` against the scripted server: the model reads the weather
with an ordinary ``@tool`` and answers with the schema's fields; both give
``structured_response`` as a ``Weather``. What the server was sent shows the fields the
model was asked for; a malformed answer is sent back to the model, not returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from execgraph import build_graph
from tests.journeys.everyday import ARCHITECTURES, SENT, TOOLS, agent, cfg, fresh
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

ASK = "What is the weather in Paris?"
ANSWER = {"city": "Paris", "celsius": 22, "sunny": True}


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    celsius: float = Field(description="the temperature in degrees Celsius")
    sunny: bool


WEATHER = tool_calls(tool_call("get_weather", {"city": "Paris"}))
FINISH = tool_calls(tool_call("finish", ANSWER))
#: What the model says in each architecture: react and plan-and-execute answer as soon as
#: they know, as ``create_agent`` does; the workflow walks its stages (one per tool) to
#: ``conclude``, and hybrid its phases (collect, then publish for the email) to the last.
SCRIPTS = {
    "react": [WEATHER, FINISH],
    "plan_execute": [WEATHER, FINISH],
    "workflow": [WEATHER, text("No email to send."), FINISH],
    "hybrid": [WEATHER, text("Collected the weather."), FINISH],
}


def _tool(request: Any, name: str) -> dict[str, Any]:
    """The tool ``name`` as a request offered it to the model."""
    [offered] = [t for t in request.body["tools"] if t["function"]["name"] == name]
    return dict(offered["function"])


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_the_answer_is_the_schema_as_with_create_agent(
    home: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    arch: str,
) -> None:
    fresh()
    openai_server.add(*SCRIPTS[arch])
    app = build_graph(arch, model=chat_model(), tools=TOOLS, response_format=Weather)
    out = app.invoke({"messages": [HumanMessage(ASK)]}, cfg(f"weather-{arch}"))
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["structured_response"] == Weather(city="Paris", celsius=22, sunny=True)
    finish = _tool(openai_server.requests[-1], "finish")
    assert set(finish["parameters"]["properties"]) == {"city", "celsius", "sunny"}
    assert "Celsius" in str(finish["parameters"])  # the field's description reaches the model

    assert out["budget"]["used"]["model_calls"] == len(SCRIPTS[arch])
    assert not SENT  # no stage or phase sent anything on its own

    openai_server.add(WEATHER, tool_calls(tool_call("Weather", ANSWER)))  # ToolStrategy's tool
    yardstick = agent(chat_model(), response_format=ToolStrategy(Weather))
    theirs = yardstick.invoke({"messages": [HumanMessage(ASK)]}, cfg("agent"))
    assert theirs["structured_response"] == out["structured_response"]
    assert not openai_server.unexpected


def test_a_malformed_answer_goes_back_to_the_model_and_ainvoke_gives_the_schema(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(
        tool_calls(tool_call("finish", {"city": "Paris", "celsius": "warm"})),
        tool_calls(tool_call("finish", ANSWER)),
    )
    app = build_graph("react", model=chat_model(), tools=TOOLS, response_format=Weather)
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage(ASK)]}, cfg("repaired")))
    assert out["structured_response"] == Weather(**ANSWER)
    repair = str(openai_server.requests[-1].body["messages"])
    assert "celsius" in repair and "sunny" in repair  # the model was told what was wrong
    # the stream and the state carry the answer as JSON data
    assert app.get_state(cfg("repaired")).values["structured_response"] == {
        "celsius": 22.0,
        "city": "Paris",
        "sunny": True,
    }
