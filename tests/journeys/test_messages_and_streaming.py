"""Messages in, messages out; streaming that shows the run.

A LangGraph user's day: ``ChatOpenAI`` against the scripted server (SSE when streamed), an
ordinary LangChain ``@tool``, the embedded default store. ``invoke({"messages": [...]})``
answers as ``create_agent`` does: the output's ``messages`` hold the model's replies, one
``ToolMessage`` per call with the model's ids, and end with the answer; ``stream`` shows
the same conversation on ``messages`` (token chunks and tool messages), the runtime's
event log on ``custom`` while the run goes, and node updates on ``updates``. Where a
check is plain LangGraph behaviour, ``langchain.agents.create_agent`` passes the same check
on the same server in the same test.

The input is the same for both: only messages. The last human message is the goal, and
execgraph accepts the answer on the tool's observations (evidence, unverified); the tool
declares itself a read in its ``metadata``, so it runs without a person.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.store.live import LOG_ONLY
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

WEATHER = {"Paris": "sunny", "Rome": "rainy"}
ANSWER = "Paris is sunny and Rome is rainy."
QUESTION = "What is the weather in Paris and in Rome?"


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return WEATHER.get(city, "unknown")


get_weather.metadata = {"effect": "read"}  # declared: a read runs without a person


def _script(
    server: OpenAIServer, answer: str = ANSWER, cities: Sequence[str] = ("Paris", "Rome")
) -> list[str]:
    """One turn calling the tool for each city at once, then the answer; the call ids."""
    calls = [tool_call("get_weather", {"city": c}) for c in cities]
    server.add(tool_calls(*calls), text(answer))
    return [c.id for c in calls]


def _execgraph(model: ChatOpenAI | str, server: OpenAIServer) -> Any:
    kwargs = {"base_url": server.base_url, "api_key": "sk-test-key", "max_retries": 0}
    return build_graph(
        "react",
        model=model,
        tools=[get_weather],
        model_kwargs=kwargs if isinstance(model, str) else None,
    )


def _agent(model: ChatOpenAI) -> Any:
    return create_agent(model, [get_weather], checkpointer=InMemorySaver())


def _input(question: str = QUESTION) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def check_conversation(
    messages: Sequence[BaseMessage],
    call_ids: Sequence[str],
    answer: str,
    cities: Sequence[str] = ("Paris", "Rome"),
) -> None:
    """Ends with the AI answer; one ToolMessage per call, answering the model's id with
    what the tool said."""
    last = messages[-1]
    assert isinstance(last, AIMessage) and last.content == answer and not last.tool_calls
    asked = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert asked[-len(call_ids) :] == list(call_ids)
    assert set(call_ids) <= set(answers) and len(answers) == len(set(answers))
    for call_id, city in zip(call_ids, cities, strict=True):
        assert WEATHER[city] in str(answers[call_id].content)
        assert answers[call_id].status == "success"


def test_invoke_with_messages_answers_like_create_agent(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    ids = _script(openai_server)
    out = _execgraph(chat_model(), openai_server).invoke(_input(), _cfg("journey"))
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["contract"]["goal"] == QUESTION  # the last human message is the goal
    check_conversation(out["messages"], ids, ANSWER)
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.artifact["call_id"] for m in tools) == ["t1.c0", "t1.c1"]  # ToolResults
    answered = {m.tool_call_id: m.artifact["call_id"] for m in tools}
    assert [out["results"][answered[i]]["tool_call_id"] for i in ids] == ids

    ids = _script(openai_server)  # parity: the same check passes for create_agent
    agent_out = _agent(chat_model()).invoke(_input(), _cfg("agent"))
    check_conversation(agent_out["messages"], ids, ANSWER)
    assert not openai_server.unexpected


def test_a_new_message_on_a_finished_thread_continues_the_conversation(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    app = _execgraph(chat_model(), openai_server)
    agent = _agent(chat_model())
    followup = "And in Rome only?"
    for run, inp in ((app.invoke, _input), (agent.invoke, _input)):
        _script(openai_server)
        run(inp(), _cfg("thread"))
        ids = _script(openai_server, "Rome is rainy.", cities=("Rome",))
        out = run(inp(followup), _cfg("thread"))
        check_conversation(out["messages"], ids, "Rome is rainy.", cities=("Rome",))
        humans = [m.content for m in out["messages"] if isinstance(m, HumanMessage)]
        assert humans == [QUESTION, followup]
        if "contract" in out:  # execgraph: the thread's next run, with the new goal
            assert out["status"] == "COMPLETED" and out["contract"]["goal"] == followup
    assert not openai_server.unexpected


@pytest.mark.parametrize("given", ["instance", "provider string"])
def test_stream_messages_yields_tool_messages_and_ai_chunks(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path, given: str
) -> None:
    model: ChatOpenAI | str = chat_model() if given == "instance" else "openai:gpt-4o-mini"
    runs = [(_execgraph(model, openai_server), _input)]
    if given == "instance":
        runs.append((_agent(chat_model()), _input))  # parity
    for app, inp in runs:
        before = len(openai_server.requests)
        ids = _script(openai_server)
        pieces = [m for m, _ in app.stream(inp(), _cfg(f"stream-{given}"), stream_mode="messages")]
        streamed = [m for m in pieces if isinstance(m, AIMessageChunk)]
        assert ANSWER in "".join(str(m.content) for m in streamed)  # the answer, as chunks
        answered = [m.tool_call_id for m in pieces if isinstance(m, ToolMessage)]
        assert sorted(answered) == sorted(ids)  # parallel calls answer in any order
        assert all(r.body.get("stream") for r in openai_server.requests[before:])  # SSE
    assert not openai_server.unexpected


def test_stream_custom_shows_the_runs_events_while_it_goes(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    _script(openai_server)
    app = _execgraph(chat_model(), openai_server)
    seen = list(app.stream(_input(), _cfg("custom"), stream_mode=["custom", "updates"]))
    custom = [chunk for mode, chunk in seen if mode == "custom"]
    events = [c for c in custom if c.get("event_id")]
    logged = SqliteExecutionStore(home / "exec.db").events("custom")
    assert [c["event_id"] for c in events] == [e.event_id for e in logged if e.type not in LOG_ONLY]
    kinds = {c["kind"] for c in events}
    assert {
        "run.admitted",
        "model.called",
        "tool.resolved",
        "tool.started",
        "tool.completed",
        "verifier.verdict",
        "run.finished",
    } <= kinds
    assert {c["call_id"] for c in custom if c["kind"] == "tool.running"} == {"t1.c0", "t1.c1"}
    order = [
        (mode, chunk.get("kind") if mode == "custom" else next(iter(chunk))) for mode, chunk in seen
    ]
    assert order.index(("custom", "tool.completed")) < order.index(("updates", "verify"))
    assert order[-1] == ("updates", "verify") and order[-2] == ("custom", "run.finished")


def test_stream_updates_still_works(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], home: Path
) -> None:
    for app, inp in (
        (_execgraph(chat_model(), openai_server), _input),
        (_agent(chat_model()), _input),
    ):
        ids = _script(openai_server)
        updates = list(app.stream(inp(), _cfg("updates"), stream_mode="updates"))
        assert all(isinstance(u, dict) and len(u) == 1 for u in updates)
        answered = [
            m.tool_call_id
            for u in updates
            for node in u.values()
            for m in (node or {}).get("messages", [])
            if isinstance(m, ToolMessage)
        ]
        assert sorted(answered) == sorted(ids)  # the two calls run in parallel: any order
    assert not openai_server.unexpected
