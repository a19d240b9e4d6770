"""A turn streams its reply's tokens when the caller streams, tool calls parsed strictly.

A ``"provider:model"`` model does not stream tool turns (``disable_streaming=
"tool_calling"``), and every turn offers tools, so without this a user streaming
``stream_mode="messages"`` would only ever get whole replies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel._messages import StreamMessagesHandler

from execgraph.graph import build_graph
from execgraph.nodes.model.streamed import streaming_model, strict_reply, wants_tokens
from execgraph.tools.adapters import FileAdapter
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

TRUNCATED = '{"path": "a.txt'


def test_a_streamed_call_whose_arguments_are_not_json_is_invalid() -> None:
    chunk = AIMessageChunk(
        content="",
        id="run-1",
        tool_call_chunks=[
            {"name": "read_file", "args": TRUNCATED, "id": "c1", "index": 0},
            {"name": "list_files", "args": '{"path": "."}', "id": "c2", "index": 1},
            {"name": "now", "args": "", "id": "c3", "index": 2},
            {"name": "odd", "args": "[1]", "id": "c4", "index": 3},
        ],
    )
    reply = strict_reply(chunk)
    assert [(c["id"], c["args"]) for c in reply.tool_calls] == [("c2", {"path": "."}), ("c3", {})]
    assert [(c["id"], c["args"]) for c in reply.invalid_tool_calls] == [
        ("c1", TRUNCATED),
        ("c4", "[1]"),
    ]
    assert reply.id == "run-1" and isinstance(reply, AIMessage)
    loose = AIMessageChunk(content="", tool_call_chunks=[chunk.tool_call_chunks[0]])
    assert loose.tool_calls[0]["args"] == {"path": "a.txt"}  # what the strict parse refuses


def test_only_a_caller_that_streams_gets_tokens() -> None:
    handler = StreamMessagesHandler(lambda chunk: None, subgraphs=False)
    assert wants_tokens({"callbacks": CallbackManager([handler])})
    assert wants_tokens({"callbacks": [handler]})
    assert not wants_tokens({"callbacks": CallbackManager([])}) and not wants_tokens(None)


def test_only_disabled_tool_streaming_is_lifted(openai_server: OpenAIServer) -> None:
    model = ChatOpenAI(
        base_url=openai_server.base_url, api_key="k", disable_streaming="tool_calling"
    )  # type: ignore[arg-type]
    lifted = streaming_model(model)
    assert lifted.disable_streaming is False and model.disable_streaming == "tool_calling"
    never = ChatOpenAI(base_url=openai_server.base_url, api_key="k", disable_streaming=True)  # type: ignore[arg-type]
    assert streaming_model(never) is never


def _app(tmp_path: Path, server: OpenAIServer) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha")
    return build_graph(
        "react",
        model="openai:gpt-4o-mini",
        model_kwargs={"base_url": server.base_url, "api_key": "k", "max_retries": 0},
        tools=[FileAdapter(ws)],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        workspace=ws,
    )


def test_a_provider_string_model_streams_its_tokens_and_repairs_a_truncated_call(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        tool_calls(tool_call("read_file", TRUNCATED, id="bad")),
        tool_calls(tool_call("read_file", {"path": "a.txt"}, id="good")),
        text("a.txt says alpha."),
    )
    app = _app(tmp_path, openai_server)
    cfg = {"configurable": {"thread_id": "tokens"}}
    task = {"success_checks": [{"kind": "tool_succeeded", "target": "read_file"}]}
    inp = {"messages": [HumanMessage("What does a.txt say?")], "task": task}
    chunks = [m for m, _ in app.stream(inp, cfg, stream_mode="messages")]
    said = "".join(str(m.content) for m in chunks if isinstance(m, AIMessageChunk))
    assert "a.txt says alpha." in said  # token chunks, not whole messages
    assert all(r.body.get("stream") for r in openai_server.requests)
    out = app.get_state(cfg).values
    assert out["status"] == "COMPLETED", out.get("error")
    assert "malformed" in str(openai_server.requests[1].body["messages"])  # repaired
    assert [r["tool_call_id"] for r in out["results"].values()] == ["good"]  # bad never ran
    assert out["messages"][-1].content == "a.txt says alpha."


def test_a_plain_invoke_does_not_stream(tmp_path: Path, openai_server: OpenAIServer) -> None:
    openai_server.add(
        tool_calls(tool_call("read_file", {"path": "a.txt"}, id="good")), text("alpha")
    )
    app = _app(tmp_path, openai_server)
    task = {
        "goal": "Read a.txt",
        "success_checks": [{"kind": "tool_succeeded", "target": "read_file"}],
    }
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "plain"}})
    assert out["status"] == "COMPLETED"
    assert not any(r.body.get("stream") for r in openai_server.requests)
