"""``response_format``: the final answer in a structure the developer gives, as ``create_agent``.

The model answers by calling ``finish`` with the schema's fields. A finish that does not
match, or an answer written as text, goes back to the model within the turn's repairs; the
accepted answer is ``structured_response``: JSON data in the state, an instance of the
schema from ``invoke``/``ainvoke``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

from execgraph.graph import build_graph
from execgraph.state.errors import UsageError
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter
from tests.graph.test_architectures import READ, S_READ, S_WRITE, STAGES, TASK, WRITE, call


class Fact(BaseModel):
    """What the report says."""

    fact: int
    source: str


ANSWER = {"fact": 42, "source": "source.txt"}
FINISH = call("finish", ANSWER)
REPLIES: dict[str, list[AIMessage]] = {
    "react": [READ, WRITE, FINISH],
    "workflow": [READ, WRITE, FINISH],
    "plan_execute": [call("submit_plan", {"steps": [S_READ, S_WRITE]}), FINISH],
    # the collect phase's finish opens the next phase: it takes no answer's fields
    "hybrid": [READ, call("finish", {"output": "collected"}), WRITE, FINISH],
}


def _graph(
    tmp_path: Path, arch: str, replies: list[Any], response_format: Any = Fact
) -> tuple[Any, ScriptedChatModel]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "source.txt").write_text("fact: 42\n")
    model = ScriptedChatModel(replies)
    app = build_graph(
        arch,
        model=model,
        tools=[FileAdapter(ws)],
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
        stages=STAGES,
        response_format=response_format,
    )
    return app, model


def _finish_tool(model: ScriptedChatModel, index: int = -1) -> dict[str, Any]:
    """The ``finish`` schema bound to the model's call ``index``."""
    [finish] = [t for t in model.tools_bound[index] if t["function"]["name"] == "finish"]
    return finish["function"]


@pytest.mark.parametrize("arch", list(REPLIES))
def test_every_architecture_answers_in_the_schema(tmp_path: Path, arch: str) -> None:
    app, model = _graph(tmp_path, arch, REPLIES[arch])
    cfg = {"configurable": {"thread_id": arch}}
    out = app.invoke({"task": TASK}, cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    model.assert_consumed()
    assert out["structured_response"] == Fact(fact=42, source="source.txt")
    assert json.loads(out["output"]) == ANSWER  # what checks and `execgraph status` read
    assert app.get_state(cfg).values["structured_response"] == ANSWER  # data in the state
    assert set(_finish_tool(model)["parameters"]["properties"]) == {"fact", "source"}
    if arch == "hybrid":  # a phase's finish keeps its one text argument
        assert set(_finish_tool(model, 1)["parameters"]["properties"]) == {"output"}


def test_a_finish_that_does_not_match_goes_back_to_the_model(tmp_path: Path) -> None:
    wrong = call("finish", {"fact": "forty-two"}, "1")
    text = AIMessage(content="The fact is 42, from source.txt.")
    app, model = _graph(tmp_path, "react", [wrong, text, FINISH])
    out = app.invoke({"messages": [HumanMessage("What fact does source.txt hold?")]}, _cfg())
    assert out["status"] == "COMPLETED"
    assert out["structured_response"] == Fact(**ANSWER)
    told = [m.content for m in model.calls[1] if isinstance(m, HumanMessage | ToolMessage)]
    assert any("fact" in str(t) and "source" in str(t) for t in told), told  # what is wrong
    told = [str(m.content) for m in model.calls[2]]
    assert any("calling finish" in t for t in told), told  # text is not the answer
    assert out["budget"]["used"]["model_calls"] == 3  # one turn and its two repairs


def test_a_model_that_never_gives_the_structure_fails_the_run(tmp_path: Path) -> None:
    text = AIMessage(content="42")
    app, _ = _graph(tmp_path, "react", [text, text, text])
    out = app.invoke({"messages": [HumanMessage("What fact does source.txt hold?")]}, _cfg())
    assert out["status"] == "FAILED"
    assert out["error"]["type"] == "ModelOutputError"
    assert out.get("structured_response") is None


def test_ainvoke_returns_the_schema_and_a_next_run_starts_without_the_last_answer(
    tmp_path: Path,
) -> None:
    second = call("finish", {"fact": 7, "source": "memory"}, "2")
    app, _ = _graph(tmp_path, "react", [FINISH, AIMessage(content="no"), second])
    cfg = _cfg()
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("the fact?")]}, cfg))
    assert out["structured_response"] == Fact(**ANSWER)
    again = app.invoke({"messages": [HumanMessage("and now?")]}, cfg)
    assert again["structured_response"] == Fact(fact=7, source="memory")


@dataclass
class Point:
    x: int
    y: int


class Pair(TypedDict):
    left: str
    right: str


@pytest.mark.parametrize(
    ("schema", "args", "expected"),
    [
        (Point, {"x": 1, "y": "2"}, Point(1, 2)),
        (Pair, {"left": "a", "right": "b"}, {"left": "a", "right": "b"}),
        (ToolStrategy(Fact), ANSWER, Fact(**ANSWER)),  # create_agent's own wrapper
    ],
)
def test_a_dataclass_a_typeddict_or_a_tool_strategy(
    tmp_path: Path, schema: Any, args: dict[str, Any], expected: Any
) -> None:
    app, _ = _graph(tmp_path, "react", [call("finish", args)], response_format=schema)
    out = app.invoke({"messages": [HumanMessage("answer")]}, _cfg())
    assert out["structured_response"] == expected


@pytest.mark.parametrize("schema", [{"type": "object", "properties": {}}, list[int], int])
def test_what_is_not_an_object_type_is_refused_when_the_graph_is_built(
    tmp_path: Path, schema: Any
) -> None:
    with pytest.raises(UsageError, match="response_format"):
        _graph(tmp_path, "react", [], response_format=schema)


def test_without_a_response_format_finish_takes_text(tmp_path: Path) -> None:
    app, model = _graph(tmp_path, "react", [call("finish", {"output": "42"})], None)
    out = app.invoke({"messages": [HumanMessage("the fact?")]}, _cfg())
    assert out["output"] == "42" and out.get("structured_response") is None
    assert set(_finish_tool(model)["parameters"]["properties"]) == {"output"}


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": "answer"}}
