"""Any LangChain chat model drives the graphs: ChatOpenAI against a local server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.tools.adapters import FileAdapter
from tests.support.openai_server import OpenAIServer, error, tool_call, tool_calls

KEY = "sk-test-5e6f7a8b9c0d1e2f"


def test_react_over_chat_openai_repairs_malformed_arguments(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "source.txt").write_text("fact: 42")
    openai_server.add(
        tool_calls(tool_call("read_file", '{"path": "source.txt"')),  # not JSON: repaired
        tool_calls(tool_call("read_file", {"path": "source.txt"})),
        tool_calls(tool_call("finish", {"output": "the fact is 42"})),
    )
    model = ChatOpenAI(
        model="gpt-test", base_url=openai_server.base_url, api_key="test", max_retries=0
    )
    app = build_graph(
        "react",
        model=model,
        tools=[FileAdapter(ws)],
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
    )
    task = {
        "goal": "What fact does source.txt hold?",
        "success_checks": [{"kind": "output_contains", "value": "42"}],
    }
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "openai"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["budget"]["used"]["model_calls"] == 3
    assert out["budget"]["used"]["tokens_in"] > 0  # usage from the provider is counted
    first, repair, third = (r.body for r in openai_server.requests)
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"read_file", "write_file", "finish"} <= offered
    assert "malformed" in json.dumps(repair["messages"][-1])
    tool_msg = next(m for m in third["messages"] if m["role"] == "tool")
    assert "untrusted" in tool_msg["content"] and "fact: 42" in tool_msg["content"]


def test_provider_string_selects_the_model(tmp_path: Path, openai_server: OpenAIServer) -> None:
    openai_server.add(tool_calls(tool_call("abort", {"reason": "nothing to do"})))
    app = build_graph(
        "react",
        model="openai:gpt-test",
        tools=[FileAdapter(tmp_path)],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        model_kwargs={"base_url": openai_server.base_url, "api_key": "test"},
    )
    out = app.invoke({"task": {"goal": "x"}}, {"configurable": {"thread_id": "s"}})
    assert out["status"] == "FAILED" and "aborted" in out["error"]["message"]


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (429, "Rate limit reached for gpt-test in organization org-7 on requests per min"),
        (401, f"Incorrect API key provided: {KEY}. You can find your API key in your account"),
    ],
)
def test_a_provider_error_tells_the_user_status_message_and_url(
    tmp_path: Path, openai_server: OpenAIServer, status: int, said: str
) -> None:
    openai_server.add(error(status, said))
    base = openai_server.base_url.replace("http://", "http://bot:pw-7d1@")  # userinfo
    model = ChatOpenAI(
        model="gpt-test",
        base_url=base,
        api_key="test",
        max_retries=0,
        default_query={"api_key": KEY, "api-version": "2024-06-01"},
    )
    app = build_graph(
        "react", model=model, tools=[FileAdapter(tmp_path)], checkpointer=False, home=tmp_path
    )
    out = app.invoke({"task": {"goal": "x"}}, {"configurable": {"thread_id": f"e{status}"}})
    assert out["status"] == "FAILED"
    message = out["error"]["message"]
    assert f"HTTP {status}" in message
    url = f"POST http://127.0.0.1:{openai_server.port}/v1/chat/completions"
    assert f"{url}?api_key=[redacted]&api-version=2024-06-01" in message
    assert said.split(":")[0] in message  # the provider's own words
    assert KEY not in message and "pw-7d1" not in message
    assert len(message) < 1_000, message
