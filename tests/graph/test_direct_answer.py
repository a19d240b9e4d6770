"""A tool whose output is the answer (``return_direct``) ends a ReAct run with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import build_graph, tool_spec
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel


@tool_spec(effect="read", return_direct=True)
def order_status(order: str) -> str:
    """The shipping status of an order."""
    if order == "missing":
        raise ToolException(f"no order {order}")
    return f"order {order}: shipped"


@tool_spec(effect="read", return_direct=True)
def order_history(order: str) -> str:
    """Every event of an order (long)."""
    return f"order {order}: " + "moved; " * 20_000


@tool_spec(effect="read")
def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def _calls(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"c{i}"} for i, (n, a) in enumerate(calls)],
    )


def _run(tmp_path: Path, replies: list[Any], task: dict[str, Any]) -> tuple[Any, Any]:
    model = ScriptedChatModel(replies)
    app = build_graph(
        "react",
        model=model,
        tools=[order_status, order_history, weather],
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app.invoke({"task": task}, {"configurable": {"thread_id": "t"}}), model


def test_the_tools_output_is_the_verified_answer_and_the_model_is_not_asked_again(
    tmp_path: Path,
) -> None:
    checks = [{"kind": "output_contains", "value": "shipped"}]
    out, model = _run(
        tmp_path,
        [_calls(("order_status", {"order": "A1"}))],
        {"goal": "where is order A1?", "success_checks": checks},
    )
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "order A1: shipped" and out["verification"]["accepted"]
    assert len(model.calls) == 1 and model.remaining == 0
    assert isinstance(out["messages"][-1], ToolMessage)  # as create_agent ends


def test_an_answer_the_checks_reject_goes_back_to_the_model(tmp_path: Path) -> None:
    checks = [{"kind": "output_contains", "value": "delivered"}]
    finish = AIMessage(
        content="",
        tool_calls=[{"name": "finish", "args": {"output": "A1 delivered"}, "id": "f"}],
    )
    out, model = _run(
        tmp_path,
        [_calls(("order_status", {"order": "A1"})), finish],
        {"goal": "was A1 delivered?", "success_checks": checks},
    )
    assert out["status"] == "COMPLETED" and out["output"] == "A1 delivered"
    assert len(model.calls) == 2
    assert "rejected" in "".join(str(m.content) for m in model.calls[1])


def test_a_failed_call_an_ordinary_tool_beside_it_or_a_cut_output_asks_the_model(
    tmp_path: Path,
) -> None:
    for n, first in enumerate(
        (
            _calls(("order_status", {"order": "missing"})),
            _calls(("order_status", {"order": "A1"}), ("weather", {"city": "Rome"})),
            _calls(("order_history", {"order": "A1"})),  # more than the run keeps: no answer
        )
    ):
        out, model = _run(
            tmp_path / str(n),
            [first, "Here you are."],
            {"goal": "order status"},
        )
        assert out["status"] == "COMPLETED" and out["output"] == "Here you are."
        assert len(model.calls) == 2


def test_a_langchain_tools_return_direct_is_its_declaration(tmp_path: Path) -> None:
    from execgraph import from_langchain

    @tool(return_direct=True)
    def lookup(order: str) -> str:
        """Look an order up."""
        return "ok"

    assert from_langchain(lookup, effect="read").return_direct is True
    assert from_langchain(lookup, effect="read", return_direct=False).return_direct is False
