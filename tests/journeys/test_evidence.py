"""A user's ordinary tools produce evidence, so a bare goal can complete.

No adapter, no ``success_checks``: a LangChain ``@tool`` and two plain ``@tool_spec``
functions, ``ChatOpenAI`` against the scripted server, the embedded default store. A
successful call is an observation — evidence, unverified — and that is what the verifier
accepts a result on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from execgraph import build_graph, tool_spec
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

ANSWER = "It is sunny in Paris, 22 °C."


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 22 °C"


get_weather.metadata = {"effect": "read"}  # declared: a read runs without a person


def test_a_bare_goal_completes_on_one_langchain_tool(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    openai_server.add(tool_calls(tool_call("get_weather", {"city": "Paris"})), text(ANSWER))
    app = build_graph("react", model=chat_model(), tools=[get_weather])
    out = app.invoke(
        {"task": {"goal": "What's the weather in Paris?"}}, {"configurable": {"thread_id": "w"}}
    )
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == ANSWER
    assert out["budget"]["used"]["model_calls"] == 2 and len(openai_server.requests) == 2
    [item] = out["evidence"].values()
    assert item["kind"] == "observation" and item["verified"] is False
    assert "sunny" in item["value"]
    assert out["verification"]["accepted"] is True


def test_the_seeds_search_read_finish_path_is_accepted_on_two_evidence_items(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    @tool_spec(effect="read")
    def search(key: str) -> list[dict[str, Any]]:
        """Search the papers by keyword."""
        return [{"source_id": "paper-a", "title": "Retrieval-augmented generation"}]

    @tool_spec(effect="read")
    def read(key: str) -> dict[str, Any]:
        """Read one paper by its source id."""
        return {"source_id": key, "text": "RAG grounds answers in retrieved passages."}

    openai_server.add(
        tool_calls(tool_call("search", {"key": "rag"})),
        tool_calls(tool_call("finish", {"output": "too early"})),
        tool_calls(tool_call("read", {"key": "paper-a"})),
        tool_calls(tool_call("finish", {"output": "RAG grounds answers [paper-a]."})),
    )
    app = build_graph("react", model=chat_model(), tools=[search, read])
    task = {
        "goal": "Summarise the representative paper on RAG.",
        "success_checks": [{"kind": "min_evidence", "count": 2}],
    }
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "seed"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "RAG grounds answers [paper-a]."
    assert out["budget"]["used"]["model_calls"] == 4
    assert out["budget"]["used"]["tool_calls"] == 2
    # The early finish, on one item, was rejected with the count it lacked.
    early = openai_server.requests[2].body["messages"]
    assert any("finish rejected" in str(m.get("content")) for m in early)
    assert any("1 of 2" in str(m.get("content")) for m in early)
    # Keyed by the source a tool returned (read), or by tool + arguments hash (search,
    # whose data is a list and names no one source).
    read_key, search_key = sorted(out["evidence"])
    assert read_key == "read:paper-a"
    assert search_key.startswith("search:") and len(search_key) == len("search:") + 16
    assert not any(e["verified"] for e in out["evidence"].values())
