"""Observations carry their time and origin: evidence a tool names itself is stamped by
the runtime with the call that observed it and when, and the model is told how old an
observation is once it is no longer fresh (on the store's clock)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.contracts import Evidence
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.invocation import AdapterOutput

LATER = {"by": 0.0}


class ShiftedClock(SqliteExecutionStore):
    """A store whose clock runs ``LATER["by"]`` seconds ahead (a run resumed later)."""

    def clock(self) -> float:
        return super().clock() + LATER["by"]


@tool_spec(effect="read")
def quote_price(sku: str) -> AdapterOutput:
    """The price of a product, with the tool's own evidence (no time, someone else's id)."""
    item = Evidence(source_id=f"price:{sku}", kind="price", value="12.50", call_id="forged")
    return AdapterOutput(data={"sku": sku, "price": 12.5}, evidence=(item,))


@tool_spec(effect="read")
def wait_a_while() -> str:
    """Nothing; the run goes on two hours later."""
    LATER["by"] = 2 * 3600 + 30
    return "ok"


def run(tmp_path: Path) -> tuple[dict[str, Any], ScriptedChatModel]:
    LATER["by"] = 0.0
    (tmp_path / "ws").mkdir()
    calls = [
        {"name": "quote_price", "args": {"sku": "A1"}, "id": "q"},
    ]
    model = ScriptedChatModel(
        [
            AIMessage("", tool_calls=calls),
            AIMessage("", tool_calls=[{"name": "wait_a_while", "args": {}, "id": "w"}]),
            AIMessage("done"),
        ]
    )
    app = build_graph(
        "react",
        model=model,
        tools=[quote_price, wait_a_while],
        workspace=tmp_path / "ws",
        home=tmp_path / "home",
        store=ShiftedClock(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
    )
    out = app.invoke({"task": {"goal": "Price of A1?"}}, {"configurable": {"thread_id": "t"}})
    return out, model


def test_a_tools_own_evidence_is_stamped_with_its_call_and_time(tmp_path: Path) -> None:
    before = time.time()
    out, _ = run(tmp_path)
    (price,) = [e for e in out["evidence"].values() if e["kind"] == "price"]
    (quoted,) = [r for r in out["results"].values() if r["tool_name"] == "quote_price"]
    assert price["call_id"] == quoted["call_id"] != "forged"
    assert before <= price["observed_at"] <= time.time()


def test_the_model_is_told_how_old_an_observation_is(tmp_path: Path) -> None:
    _, model = run(tmp_path)
    second, third = model.calls[1], model.calls[2]
    # fresh: shown as it is
    assert '"age"' not in str([m.content for m in second])
    assert "observed" not in _tool_text(second, "q")
    # two hours on (the store's clock): the evidence and the observation say so
    assert '"age": "2 h"' in str([m.content for m in third])
    assert _tool_text(third, "q").endswith("(observed 2 h ago)")


def _tool_text(messages: list[Any], tool_call_id: str) -> str:
    (message,) = [
        m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == tool_call_id
    ]
    return str(message.content)
