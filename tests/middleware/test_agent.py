"""ExecutorMiddleware on a create_agent agent: async runs, declarations, what it refuses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.types import Command

from execgraph import ExecutorMiddleware, ScriptedChatModel, from_langchain, tool_spec
from execgraph.state.errors import UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.middleware.agents import Effects, agent, approval_checkpoint, call, reply

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-1"}}
EMAIL = reply(call("send_email", "call_mail", to="ann@example.org", body="hello"))


def test_under_ainvoke_a_rerun_replays_the_recorded_call(tmp_path: Path) -> None:
    effects = Effects()
    app = agent(effects, [EMAIL, "sent it", "sent it"], home=tmp_path)

    async def run() -> dict[str, Any]:
        await app.ainvoke({"messages": [("user", "email Ann")]}, CONFIG)
        await app.ainvoke(Command(resume={"type": "approve"}), CONFIG)
        return dict(await app.ainvoke(None, approval_checkpoint(app, CONFIG)))

    out = asyncio.run(run())

    assert effects.emails == [{"to": "ann@example.org", "body": "hello"}]
    assert out["messages"][-1].content == "sent it"


def test_the_record_is_in_the_execution_store_under_the_thread(tmp_path: Path) -> None:
    effects = Effects()
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = agent(effects, [EMAIL, "sent it"], home=tmp_path, store=store)
    app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    app.invoke(Command(resume="approve"), CONFIG)

    [record] = store.committed("thread-1")
    assert record.call_id == "t1-call_mail" and record.result is not None
    assert record.result["outcome"] == "succeeded" and record.tool == "send_email"


def test_a_declaration_given_to_the_middleware_takes_precedence(tmp_path: Path) -> None:
    effects = Effects()
    send_email, log_line = effects.tools()
    declared = from_langchain(send_email, effect="write")  # no person asked for a write
    model = ScriptedChatModel([EMAIL, "sent it"])
    middleware = ExecutorMiddleware(home=tmp_path, tools=[declared])
    app = create_agent(model, tools=[send_email, log_line], middleware=[middleware])

    out = app.invoke({"messages": [("user", "email Ann")]}, CONFIG)

    assert "__interrupt__" not in out
    assert effects.emails == [{"to": "ann@example.org", "body": "hello"}]


def test_a_run_without_a_thread_id_is_refused_before_any_tool_runs(tmp_path: Path) -> None:
    effects = Effects()
    model = ScriptedChatModel([reply(call("log_line", "call_a", line="a")), "done"])
    app = create_agent(model, tools=effects.tools(), middleware=[ExecutorMiddleware(home=tmp_path)])

    with pytest.raises(UsageError, match="thread id"):
        app.invoke({"messages": [("user", "log")]})
    assert effects.runs == {}


def test_a_call_id_the_model_repeats_in_a_later_turn_is_a_new_call(tmp_path: Path) -> None:
    effects = Effects()
    same = reply(call("log_line", "0", line="a"))  # ids some providers number per reply
    app = agent(effects, [same, "logged", same, "logged again"], home=tmp_path)

    app.invoke({"messages": [("user", "log a")]}, CONFIG)
    out = app.invoke({"messages": [("user", "log a again")]}, CONFIG)

    assert effects.runs == {"log_line:a": 2}
    assert out["messages"][-1].content == "logged again"


def test_a_tool_spec_given_to_the_middleware_is_offered_and_run_by_the_executor(
    tmp_path: Path,
) -> None:
    notes: list[str] = []

    @tool_spec(effect="write")
    def note(text: str) -> str:
        """Write a note."""
        notes.append(text)
        return "noted"

    model = ScriptedChatModel([reply(call("note", "call_n", text="hi")), "noted it"])
    app = create_agent(model, middleware=[ExecutorMiddleware(home=tmp_path, tools=[note])])

    out = app.invoke({"messages": [("user", "note hi")]}, CONFIG)

    assert model.tools_offered[0] == ("note",)  # the spec's schema, as the model sees it
    assert notes == ["hi"]
    assert out["messages"][-1].content == "noted it"


def test_an_agent_tool_may_take_a_name_execgraphs_graphs_reserve(tmp_path: Path) -> None:
    asked: list[str] = []

    @tool
    def ask_user(question: str) -> str:
        """Ask the user a question."""
        asked.append(question)
        return "blue"

    ask_user.metadata = {"effect": "read"}
    model = ScriptedChatModel([reply(call("ask_user", "call_q", question="colour?")), "blue"])
    app = create_agent(model, tools=[ask_user], middleware=[ExecutorMiddleware(home=tmp_path)])

    out = app.invoke({"messages": [("user", "what colour?")]}, CONFIG)

    assert asked == ["colour?"] and out["messages"][-1].content == "blue"


def test_a_tool_message_points_at_its_record_instead_of_carrying_the_result(
    tmp_path: Path,
) -> None:
    # create_agent keeps every message in every checkpoint: a result carried there again
    # would make each step's checkpoint grow with the whole run's results
    effects = Effects()
    store = SqliteExecutionStore(tmp_path / "exec.db")
    model = [reply(call("log_line", "call_a", line="a" * 3000)), "logged"]
    app = agent(effects, model, home=tmp_path, store=store)

    out = app.invoke({"messages": [("user", "log it")]}, CONFIG)

    [answer] = [m for m in out["messages"] if m.type == "tool"]
    assert set(answer.artifact) == {"call_id", "tool_name", "outcome", "status", "idempotency_key"}
    record = store.get(answer.artifact["idempotency_key"])
    assert record is not None and record.result is not None
    assert record.result["outcome"] == answer.artifact["outcome"] == "succeeded"


def test_a_tools_own_artifact_stays_beside_the_pointer_to_its_record(tmp_path: Path) -> None:
    @tool(response_format="content_and_artifact")
    def find_notes(query: str) -> tuple[str, dict[str, Any]]:
        """Find notes."""
        return f"2 notes match {query}", {"ids": [7, 9]}

    find_notes.metadata = {"effect": "read"}
    model = ScriptedChatModel([reply(call("find_notes", "call_f", query="q3")), "found"])
    app = create_agent(model, tools=[find_notes], middleware=[ExecutorMiddleware(home=tmp_path)])

    out = app.invoke({"messages": [("user", "find q3")]}, CONFIG)

    [answer] = [m for m in out["messages"] if m.type == "tool"]
    assert answer.artifact["artifact"] == {"ids": [7, 9]}  # the application's, as it was
    assert answer.artifact["outcome"] == "succeeded"  # beside where the record is
    read = "".join(str(m.content) for m in model.calls[-1])  # a provider sends content only
    assert "2 notes match q3" in read and "ids" not in read
