"""A bug in a tool reaches the developer, as with ``create_agent``.

A tool that raises an exception nobody declared (a ``KeyError``, not a ``ToolException``
or ``ModelRetry`` written for the model) is a bug: ``invoke`` raises it, as
``create_agent`` does, its traceback is logged, and the model is not asked again, so the
run spends none of its budget on it. The run's record says what happened: the call
FAILED with a ``tool.raised`` event, the run FAILED naming the bug, and the thread's next
input starts its next run. ``build_graph(..., tool_errors="model")`` hands the failure to
the model instead, as a typed message without the exception's text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from execgraph.state.errors import UsageError
from tests.journeys.everyday import ARCHITECTURES, agent, cfg, get_weather
from tests.support.cli_helpers import cli
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(120)

ASK = {"messages": [HumanMessage("What is the forecast for Paris?")]}


@tool
def forecast(city: str) -> str:
    """The forecast for a city."""
    return {"Rome": "rain"}[city]  # a bug: Paris is missing


forecast.metadata = {"effect": "read"}
FORECAST = [forecast]  # what `execgraph run --tools` imports


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_a_tool_that_raises_a_bug_raises_from_invoke_as_with_create_agent(
    home: Path,
    openai_server: OpenAIServer,
    chat_model: Callable[..., ChatOpenAI],
    caplog: pytest.LogCaptureFixture,
    arch: str,
) -> None:
    openai_server.add(tool_calls(tool_call("forecast", {"city": "Paris"})))
    app = build_graph(arch, model=chat_model(), tools=[forecast, get_weather])
    with caplog.at_level(logging.WARNING, logger="execgraph"), pytest.raises(KeyError) as bug:
        app.invoke(ASK, cfg("bug"))
    assert bug.value.args == ("Paris",)
    assert "forecast" in str(bug.value.__notes__)  # which tool, which call
    [logged] = [r.getMessage() for r in caplog.records if r.name == "execgraph.executor"]
    assert "forecast" in logged and "KeyError" in logged  # the developer's traceback, logged
    assert "Traceback" in logged and "Paris" in logged
    assert len(openai_server.requests) == 1 and not openai_server.unexpected  # no budget burnt

    state = app.get_state(cfg("bug")).values
    assert state["status"] == "FAILED"
    assert state["error"]["message"].startswith("tool bug: forecast raised KeyError")
    [result] = state["results"].values()
    assert (result["status"], result["error"]["type"]) == ("PERMANENT_ERROR", "ToolRaised")
    assert state["budget"]["used"]["model_calls"] == 1

    openai_server.add(text("It will be sunny."))  # the next input is the thread's next run
    out = app.invoke({"messages": [HumanMessage("Never mind: hello!")]}, cfg("bug"))
    assert out["status"] == "COMPLETED" and out["output"] == "It will be sunny."

    openai_server.add(tool_calls(tool_call("forecast", {"city": "Paris"})))
    with pytest.raises(KeyError):  # create_agent: the same bug, raised the same way
        agent(chat_model(), [forecast]).invoke(ASK, cfg("agent"))
    assert not openai_server.unexpected


def test_ainvoke_and_stream_raise_the_bug_too(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    app = build_graph("react", model=chat_model(), tools=[forecast])
    openai_server.add(tool_calls(tool_call("forecast", {"city": "Paris"})))
    with pytest.raises(KeyError):
        asyncio.run(app.ainvoke(ASK, cfg("async")))
    assert app.get_state(cfg("async")).values["status"] == "FAILED"
    openai_server.add(tool_calls(tool_call("forecast", {"city": "Paris"})))
    chunks: list[object] = []
    with pytest.raises(KeyError):
        chunks.extend(app.stream(ASK, cfg("stream"), stream_mode="updates"))
    assert chunks  # every update of the run came first
    assert app.get_state(cfg("stream")).values["status"] == "FAILED"
    assert len(openai_server.requests) == 2 and not openai_server.unexpected


def test_tool_errors_model_hands_the_bug_to_the_model_without_its_text(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    openai_server.add(
        tool_calls(tool_call("forecast", {"city": "Paris"})), text("I could not get it.")
    )
    app = build_graph("react", model=chat_model(), tools=[forecast], tool_errors="model")
    out = app.invoke(ASK, cfg("model"))
    assert out["status"] == "COMPLETED" and out["output"] == "I could not get it."
    [told] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "KeyError" in str(told.content) and "Paris" not in str(told.content)
    assert len(openai_server.requests) == 2 and not openai_server.unexpected


def test_tool_errors_takes_raise_or_model(
    home: Path, chat_model: Callable[..., ChatOpenAI]
) -> None:
    with pytest.raises(UsageError, match="tool_errors"):
        build_graph("react", model=chat_model(), tools=[forecast], tool_errors="ignore")


@tool
def lookup(city: str) -> str:
    """The forecast for a city, from a table."""
    return {"Rome": "rain"}[city]  # a bug: only Rome is in the table


lookup.metadata = {"effect": "read"}


def test_a_bug_after_an_earlier_success_of_the_same_tool_still_raises(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    """The tool's first call succeeds, its second raises: the bug is raised all the same
    (a success of the tool earlier in the run does not hide a later bug of it)."""
    ask = {"messages": [HumanMessage("Rome, then Paris?")]}

    def script() -> None:
        openai_server.add(tool_calls(tool_call("lookup", {"city": "Rome"})))
        openai_server.add(tool_calls(tool_call("lookup", {"city": "Paris"})))

    script()
    app = build_graph("react", model=chat_model(), tools=[lookup])
    with pytest.raises(KeyError) as bug:
        app.invoke(ask, cfg("twice"))
    assert bug.value.args == ("Paris",)
    assert len(openai_server.requests) == 2 and not openai_server.unexpected  # not asked again
    state = app.get_state(cfg("twice")).values
    assert state["status"] == "FAILED"
    assert state["error"]["message"].startswith("tool bug: lookup raised KeyError")

    script()
    with pytest.raises(KeyError):  # create_agent: the same bug, raised the same way
        agent(chat_model(), [lookup]).invoke(ask, cfg("agent"))
    assert not openai_server.unexpected


def test_execgraph_run_exits_non_zero_and_shows_the_traceback_of_a_tool_bug(
    home: Path, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """``execgraph run`` with a tool that raises: as ``python script.py`` would, the
    command fails (the FAILED exit code, not 0) and the developer sees the traceback
    on stderr without asking for logs."""
    openai_server.add(tool_calls(tool_call("forecast", {"city": "Paris"})))
    task = tmp_path / "task.json"
    task.write_text('{"goal": "What is the forecast for Paris?"}')
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "sk-test-key"}
    tools = f"{__name__}:FORECAST"
    ran = cli("run", str(task), "--model", "openai:gpt-test", "--tools", tools, **env)
    assert ran.code == 4 and ran.status == "FAILED", ran.out  # exit code 4: FAILED
    assert "tool bug: forecast raised KeyError" in ran.out
    assert "Traceback" in ran.err and "KeyError: 'Paris'" in ran.err, ran.err
    assert 'return {"Rome": "rain"}[city]' in ran.err  # the line of the tool that raised
    assert len(openai_server.requests) == 1 and not openai_server.unexpected
