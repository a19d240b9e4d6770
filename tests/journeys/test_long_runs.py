"""A run as long as its budgets allow is not cut short by LangGraph's recursion limit.

LangGraph stops a graph after 25 supersteps unless told otherwise; a run here is bounded
by its budgets and its loop guard instead, so every compiled graph carries its own limit
(``with_config(recursion_limit=...)``), and ``invoke`` and ``astream_events`` (what
LangGraph Studio streams) both run a model that calls a tool fourteen times to the end.
(The fixed workflow's stages are its own path; it is not driven by such a script.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from tests.journeys.everyday import ARCHITECTURES, TOOLS, cfg
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(180)

CITIES = [f"City {i}" for i in range(14)]
ANSWER = "Sunny everywhere."
ASK = {"messages": [HumanMessage("The weather in each of 14 cities, one by one.")]}


def _script(server: OpenAIServer) -> None:
    server.add(*[tool_calls(tool_call("get_weather", {"city": c})) for c in CITIES], text(ANSWER))


@pytest.mark.parametrize("arch", [a for a in ARCHITECTURES if a != "workflow"])
def test_a_long_run_ends_under_invoke_and_astream_events(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], arch: str
) -> None:
    _script(openai_server)
    app = build_graph(arch, model=chat_model(), tools=TOOLS)
    out = app.invoke(ASK, cfg(f"{arch}-invoke"))
    assert out["status"] == "COMPLETED" and out["output"] == ANSWER, out.get("error")

    _script(openai_server)

    async def events() -> list[dict[str, Any]]:
        return [e async for e in app.astream_events(ASK, cfg(f"{arch}-events"), version="v2")]

    seen = asyncio.run(events())
    assert any(e["event"] == "on_tool_end" for e in seen)
    state = app.get_state(cfg(f"{arch}-events")).values
    assert state["status"] == "COMPLETED" and state["output"] == ANSWER
    assert not openai_server.unexpected
