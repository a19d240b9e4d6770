"""ChatOpenAI against the local OpenAI-compatible server: what the decide node relies on.

The decide node reads ``AIMessage.tool_calls`` for admitted decisions and
``AIMessage.invalid_tool_calls`` for its repair turns; these tests pin that a real provider
integration fills them from the wire format, including arguments that are not JSON.
"""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tests.support.openai_server import OpenAIServer, error, text, tool_call, tool_calls


@tool
def write_note(path: str, text: str) -> str:
    """Write a note to a file in the workspace."""
    return path


def _model(server: OpenAIServer, **kwargs: object) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-4o-mini",
        base_url=server.base_url,
        api_key="test",  # type: ignore[arg-type]
        max_retries=0,
        **kwargs,  # type: ignore[arg-type]
    )


def test_plain_text_reply_with_usage(openai_server: OpenAIServer) -> None:
    openai_server.add(text("hello"))

    reply = _model(openai_server).invoke([HumanMessage("hi")])

    assert isinstance(reply, AIMessage)
    assert reply.content == "hello"
    assert reply.tool_calls == [] and reply.invalid_tool_calls == []
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert reply.usage_metadata["total_tokens"] == (
        reply.usage_metadata["input_tokens"] + reply.usage_metadata["output_tokens"]
    )
    assert reply.response_metadata["finish_reason"] == "stop"
    assert openai_server.requests[0].body.get("stream") in (None, False)


def test_tool_call_arrives_parsed(openai_server: OpenAIServer) -> None:
    openai_server.add(
        tool_calls(tool_call("write_note", {"path": "a.txt", "text": "hi"}, id="call_1"))
    )

    reply = _model(openai_server).bind_tools([write_note]).invoke("write a note")

    assert reply.tool_calls == [
        {
            "name": "write_note",
            "args": {"path": "a.txt", "text": "hi"},
            "id": "call_1",
            "type": "tool_call",
        }
    ]
    assert reply.invalid_tool_calls == []
    assert reply.response_metadata["finish_reason"] == "tool_calls"


def test_malformed_arguments_arrive_as_invalid_tool_calls(openai_server: OpenAIServer) -> None:
    openai_server.add(
        tool_calls(
            tool_call("write_note", '{"path": "a.txt", "text": ', id="call_bad"),
            tool_call("write_note", {"path": "b.txt", "text": "ok"}, id="call_good"),
        )
    )

    reply = _model(openai_server).bind_tools([write_note]).invoke("write two notes")

    assert [c["id"] for c in reply.tool_calls] == ["call_good"]
    (invalid,) = reply.invalid_tool_calls
    assert invalid["id"] == "call_bad"
    assert invalid["name"] == "write_note"
    assert invalid["args"] == '{"path": "a.txt", "text": '  # raw text kept for the repair turn
    assert invalid["error"]


def test_bind_tools_sends_the_tool_schema(openai_server: OpenAIServer) -> None:
    openai_server.add(text("nothing to do"))

    _model(openai_server).bind_tools([write_note], tool_choice="auto").invoke("hi")

    (request,) = openai_server.requests
    (schema,) = request.body["tools"]
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "write_note"
    assert function["description"] == "Write a note to a file in the workspace."
    assert set(function["parameters"]["properties"]) == {"path", "text"}
    assert set(function["parameters"]["required"]) == {"path", "text"}
    assert request.body["tool_choice"] == "auto"


def test_tool_results_are_sent_back_in_the_next_request(openai_server: OpenAIServer) -> None:
    openai_server.add(
        tool_calls(tool_call("write_note", {"path": "a", "text": "b"}, id="call_7")),
        text("done"),
    )
    model = _model(openai_server).bind_tools([write_note])

    first = model.invoke([HumanMessage("go")])
    model.invoke([HumanMessage("go"), first, ToolMessage("wrote a", tool_call_id="call_7")])

    sent = openai_server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_7"
    assert sent[2] == {"role": "tool", "content": "wrote a", "tool_call_id": "call_7"}


def test_streaming_reassembles_tool_calls_and_usage(openai_server: OpenAIServer) -> None:
    openai_server.add(
        tool_calls(
            tool_call("write_note", {"path": "s.txt", "text": "x"}, id="call_s"),
            tool_call("write_note", "not json at all", id="call_broken"),
        )
    )

    model = _model(openai_server, streaming=True, stream_usage=True).bind_tools([write_note])
    message = model.invoke("stream it")

    assert openai_server.requests[0].body["stream"] is True
    assert [c["id"] for c in message.tool_calls] == ["call_s"]
    assert message.tool_calls[0]["args"] == {"path": "s.txt", "text": "x"}
    assert [c["id"] for c in message.invalid_tool_calls] == ["call_broken"]
    assert message.usage_metadata is not None and message.usage_metadata["total_tokens"] > 0


def test_streaming_silently_completes_truncated_arguments(openai_server: OpenAIServer) -> None:
    """Pins the hazard behind resolve_model's ``disable_streaming="tool_calling"`` default.

    A streamed call is parsed with a partial-JSON parser, so truncated arguments become a
    valid-looking call with truncated values instead of an invalid tool call. If this test
    starts failing, langchain stopped doing that and the default may be revisited.
    """
    openai_server.add(
        tool_calls(tool_call("write_note", '{"path": "a.txt", "text": "hello wor', id="c1"))
    )

    message = _model(openai_server, streaming=True).bind_tools([write_note]).invoke("go")

    assert message.invalid_tool_calls == []
    assert message.tool_calls[0]["args"] == {"path": "a.txt", "text": "hello wor"}


def test_server_errors_surface_as_provider_exceptions(openai_server: OpenAIServer) -> None:
    openai_server.add(error(429, "slow down"))
    with pytest.raises(openai.RateLimitError):
        _model(openai_server).invoke("hi")


def test_an_unscripted_request_is_refused_and_recorded(openai_server: OpenAIServer) -> None:
    with pytest.raises(openai.InternalServerError, match="no reply left"):
        _model(openai_server).invoke("hi")
    assert openai_server.unexpected == ["/v1/chat/completions"]
