"""call_model: a provider failure is reported by type; LangGraph's own signals pass through."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphInterrupt
from langgraph.types import Command, interrupt

from execgraph.graph import build_graph
from execgraph.nodes.model.call import call_model
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter


def _parse(ai: AIMessage) -> tuple[str | None, str | None]:
    return str(ai.content), None


def _call(model: Any) -> Any:
    return call_model(
        RunnableLambda(model),
        [HumanMessage("hi")],
        _parse,
        max_repairs=1,
        left=None,
        run_id="r",
        turn_id="t",
    )


def test_a_provider_failure_is_reported_by_type_only() -> None:
    def failing(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("upstream said: key sk-secret is invalid")

    turn = _call(failing)
    assert turn.problem == "the model call failed (RuntimeError)"
    assert turn.calls == 1 and turn.parsed is None


def test_a_provider_failure_is_logged_for_the_developer_scrubbed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def failing(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("upstream at 10.0.0.9 said: key sk-secret-0123456789 is invalid")

    with caplog.at_level(logging.ERROR, logger="execgraph"):
        turn = _call(failing)
    assert turn.problem == "the model call failed (RuntimeError)"  # the user's view: the type
    [record] = [r for r in caplog.records if r.name == "execgraph.model"]
    logged = record.getMessage()
    assert "upstream at 10.0.0.9 said: key [redacted] is invalid" in logged
    assert "sk-secret-0123456789" not in logged and "in failing" in logged  # the traceback
    assert "run r, turn t" in logged


def test_a_graph_interrupt_is_not_a_provider_failure() -> None:
    def pausing(messages: list[BaseMessage]) -> AIMessage:
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        _call(pausing)


def _call_tool(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_interrupt_inside_the_model_pauses_the_run_and_resumes(tmp_path: Path) -> None:
    # A model (or one of its callbacks) may ask a person mid-call; the run must pause there
    # and go on with the answer, not end as "the model call failed (GraphInterrupt)".
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "source.txt").write_text("fact: 42")

    def ask(messages: list[BaseMessage]) -> AIMessage:
        path = interrupt("which file should I read?")
        return _call_tool("read_file", {"path": path}, "read-1")

    model = ScriptedChatModel(
        [ask, ask, _call_tool("finish", {"output": "source.txt says 42"}, "finish-1")]
    )
    app = build_graph(
        "react",
        model=model,
        tools=[FileAdapter(ws)],
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
    )
    config: Any = {"configurable": {"thread_id": "ask-in-model"}}
    task = {
        "goal": "Report the fact",
        "success_checks": [{"kind": "output_contains", "value": "42"}],
    }

    paused = app.invoke({"task": task}, config)
    assert paused.get("error") is None, paused.get("error")
    assert [i.value for i in paused["__interrupt__"]] == ["which file should I read?"]
    assert app.get_state(config).next  # the run waits; it did not end

    done = app.invoke(Command(resume="source.txt"), config)
    assert done["status"] == "COMPLETED", done.get("error")
    assert done["output"] == "source.txt says 42"
    assert model.remaining == 0
