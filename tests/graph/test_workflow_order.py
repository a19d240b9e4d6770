"""A workflow without explicit stages runs one stage per tool in the order the tools were
given: the write before the irreversible publish, not alphabetically (publish first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import Counter


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-1"}])


def test_default_stages_follow_the_order_the_tools_were_given(tmp_path: Path) -> None:
    done = Counter()

    @tool_spec(effect="write")
    def save(item: str) -> str:
        """Save the draft."""
        done.add(f"save {item}")
        return "saved"

    @tool_spec(effect="irreversible")
    def post(item: str) -> str:
        """Publish the saved draft (irreversible)."""
        done.add(f"post {item}")
        return "posted"

    model = ScriptedChatModel(
        [call("save", {"item": "a"}), call("post", {"item": "a"}), call("finish", {"output": "ok"})]
    )
    app = build_graph(
        "workflow",
        model=model,
        tools=[save, post],
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    cfg = {"configurable": {"thread_id": "ordered"}}
    task = {
        "goal": "Save a, then post it.",
        "success_checks": [{"kind": "tool_succeeded", "target": "post"}],
    }
    out = app.invoke({"task": task}, cfg)
    [pause] = out["__interrupt__"]
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
    assert [names[0] for names in model.tools_offered[:2]] == ["save", "post"]
    assert done.effects == ["save a", "post a"]
    assert out["status"] == "COMPLETED", out.get("error")
