"""The graphs' input schema: what a person fills in (LangGraph Studio's form) and all a run
reads from ``invoke``'s input."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, TypeAdapter

from execgraph.graph import build_graph
from execgraph.graph.build import ARCHITECTURES
from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.contracts import Actor, BudgetKind, StopCondition, SuccessCheck, TaskSpec
from execgraph.state.schema import (
    ActorInput,
    BudgetsInput,
    RunInput,
    StopConditionInput,
    SuccessCheckInput,
    TaskInput,
)
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.policy import PolicyEngine
from execgraph.tools.registry import ToolRegistry


@tool_spec(effect="read")
def look(i: int) -> str:
    """Look at item i."""
    return f"item {i}"


def _finish(output: str = "done") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "finish", "args": {"output": output}, "id": "f"}]
    )


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_each_architecture_describes_a_task_or_messages(arch: str, tmp_path: Path) -> None:
    app = build_graph(arch, model=ScriptedChatModel([]), tools=[look], home=tmp_path)

    schema = app.get_input_jsonschema()

    assert set(schema["properties"]) == {"task", "messages"}
    assert "required" not in schema  # either one
    task = schema["$defs"]["TaskInput"]
    assert task["required"] == ["goal"]
    assert set(task["properties"]) == set(TaskSpec.model_fields)
    assert set(schema["$defs"]["BudgetsInput"]["properties"]) == {str(k) for k in BudgetKind}
    messages = schema["properties"]["messages"]
    assert {"$ref": "#/$defs/HumanMessage"} in messages["items"]["oneOf"]


def test_the_executor_graph_describes_a_request_or_a_batch(tmp_path: Path) -> None:
    deps = ExecutorDeps(
        registry=ToolRegistry([look]),
        policy=PolicyEngine(),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        approval_secret=b"k",
    )
    schema = build_executor(deps).get_input_jsonschema()
    assert set(schema["properties"]) == {"request", "batch"}


@pytest.mark.parametrize(
    ("typed", "model"),
    [
        (TaskInput, TaskSpec),
        (SuccessCheckInput, SuccessCheck),
        (StopConditionInput, StopCondition),
        (ActorInput, Actor),
    ],
)
def test_the_input_types_mirror_the_contracts(typed: Any, model: type[BaseModel]) -> None:
    # Admission validates against the contract; the form must ask for the same fields.
    assert set(get_type_hints(typed)) == set(model.model_fields)
    required = {name for name, field in model.model_fields.items() if field.is_required()}
    assert set(TypeAdapter(typed).json_schema().get("required", [])) == required


def test_the_budgets_are_the_budget_kinds() -> None:
    assert set(get_type_hints(BudgetsInput)) == {str(k) for k in BudgetKind}
    assert set(get_args(get_type_hints(StopConditionInput)["kind"])) == set(
        get_args(StopCondition.model_fields["kind"].annotation)
    )
    assert set(get_type_hints(RunInput)) == {"task", "messages"}


def test_a_run_reads_only_the_task_from_its_input(tmp_path: Path) -> None:
    # Nothing but the input schema's keys reaches state: a caller cannot hand a run its own
    # status or output (only the verifier sets COMPLETED).
    model = ScriptedChatModel(
        [
            _finish("too early"),
            AIMessage(content="", tool_calls=[{"name": "look", "args": {"i": 1}, "id": "c"}]),
            _finish(),
        ]
    )
    app = build_graph(
        "react", model=model, tools=[look], home=tmp_path, checkpointer=InMemorySaver()
    )
    checks = [{"kind": "tool_succeeded", "target": "look"}]
    forged = {"task": {"goal": "look", "success_checks": checks}, "status": "COMPLETED"}

    out = app.invoke({**forged, "output": "forged"}, {"configurable": {"thread_id": "t"}})

    assert out["status"] == "COMPLETED" and out["output"] == "done"
    assert model.remaining == 0  # the early finish was refused, the check met first
