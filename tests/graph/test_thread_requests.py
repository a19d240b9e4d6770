"""Messages in, messages out, and a thread's next request after its run has finished.

``invoke({"messages": [HumanMessage(...)]})`` asks what the message says, as with
``create_agent``; the output carries the conversation: the request, each model reply with
its tool calls, one ToolMessage per call. A new human message (or a new task) on a
finished thread starts the thread's next run; so does the same input again, as a
``create_agent`` graph runs again on every ``invoke``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import Stage, build_graph
from execgraph.nodes.cancel import request_cancel
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter


def _read(path: str, call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": path}, "id": call_id}])


def _app(
    tmp_path: Path, replies: list[Any], arch: str = "react"
) -> tuple[Any, SqliteExecutionStore]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha")
    (ws / "b.txt").write_text("beta")
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        arch,
        model=ScriptedChatModel(replies),
        tools=[FileAdapter(ws)],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
        workspace=ws,
    )
    return app, store


CFG = {"configurable": {"thread_id": "chat"}}


def test_the_last_human_message_is_the_goal_and_the_output_is_the_conversation(
    tmp_path: Path,
) -> None:
    app, store = _app(tmp_path, [_read("a.txt", "call_a"), AIMessage("a.txt says alpha.")])
    out = app.invoke({"messages": [HumanMessage("What does a.txt say?")]}, CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["contract"]["goal"] == "What does a.txt say?"
    human, ai, tool, answer = out["messages"]
    assert isinstance(human, HumanMessage) and human.content == "What does a.txt say?"
    assert isinstance(ai, AIMessage) and [c["id"] for c in ai.tool_calls] == ["call_a"]
    assert isinstance(tool, ToolMessage) and tool.tool_call_id == "call_a"
    assert tool.status == "success" and tool.name == "read_file"
    assert tool.artifact == out["results"]["t1.c0"]  # the ToolResult, as state holds it
    assert out["results"]["t1.c0"]["tool_call_id"] == "call_a"  # the result records it
    assert "alpha" in str(tool.content) and 'untrusted="true"' in str(tool.content)
    assert isinstance(answer, AIMessage) and answer.content == "a.txt says alpha."
    [record] = store.committed("chat")
    assert record.result is not None and record.result["tool_call_id"] == "call_a"


def test_a_task_opens_the_conversation_with_its_goal(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, [_read("a.txt", "c1"), AIMessage("alpha")])
    out = app.invoke({"task": {"goal": "Read a.txt"}}, CFG)
    assert out["status"] == "COMPLETED"
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert out["messages"][0].content == "Read a.txt"


def test_a_refused_call_is_answered_with_an_error_message(tmp_path: Path) -> None:
    escape = _read("../outside.txt", "call_x")
    app, _ = _app(tmp_path, [escape, _read("a.txt", "call_a"), AIMessage("alpha")])
    out = app.invoke({"messages": [HumanMessage("read it")]}, CFG)
    tool = next(m for m in out["messages"] if getattr(m, "tool_call_id", "") == "call_x")
    assert tool.status == "error" and tool.artifact["status"] != "OK"


def test_a_new_human_message_on_a_finished_thread_is_its_next_run(tmp_path: Path) -> None:
    replies = [
        _read("a.txt", "call_a"),
        AIMessage("a.txt says alpha."),
        _read("b.txt", "call_b"),
        AIMessage("b.txt says beta."),
    ]
    app, store = _app(tmp_path, replies)
    first = app.invoke({"messages": [HumanMessage("What does a.txt say?")]}, CFG)
    assert first["status"] == "COMPLETED"
    out = app.invoke({"messages": [HumanMessage("And b.txt?")]}, CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["contract"]["goal"] == "And b.txt?"  # not the old goal
    assert out["output"] == "b.txt says beta."
    assert out["turn"] == 4 and "t3.c0" in out["results"]  # ids keep counting
    assert out["budget"]["used"]["model_calls"] == 2  # the new run's own budget
    assert [m.content for m in out["messages"] if isinstance(m, HumanMessage)] == [
        "What does a.txt say?",
        "And b.txt?",
    ]
    assert out["messages"][-1].content == "b.txt says beta."
    runs = [
        (e.type, e.payload.get("goal") or e.payload.get("status")) for e in store.events("chat")
    ]
    assert [r for r in runs if r[0].startswith("run.")] == [
        ("run.admitted", "What does a.txt say?"),
        ("run.finished", "COMPLETED"),
        ("run.admitted", "And b.txt?"),
        ("run.finished", "COMPLETED"),
    ]


def test_a_new_task_on_a_finished_thread_is_its_next_run(tmp_path: Path) -> None:
    replies = [_read("a.txt", "c1"), AIMessage("alpha"), _read("b.txt", "c2"), AIMessage("beta")]
    app, _ = _app(tmp_path, replies)
    assert app.invoke({"task": {"goal": "Read a.txt"}}, CFG)["status"] == "COMPLETED"
    out = app.invoke({"task": {"goal": "Read b.txt"}}, CFG)
    assert out["status"] == "COMPLETED" and out["contract"]["goal"] == "Read b.txt"
    assert out["output"] == "beta"


def test_the_same_input_again_runs_again(tmp_path: Path) -> None:
    replies = [_read("a.txt", "c1"), AIMessage("alpha"), _read("a.txt", "c2"), AIMessage("again")]
    app, store = _app(tmp_path, replies)
    first = app.invoke({"task": {"goal": "Read a.txt"}}, CFG)
    again = app.invoke({"task": {"goal": "Read a.txt"}}, CFG)
    assert again["status"] == "COMPLETED" and again["output"] == "again"
    assert again["turn"] == first["turn"] + 2 and again["budget"]["used"]["model_calls"] == 2
    admitted = [e for e in store.events("chat") if e.type == "run.admitted"]
    assert [e.payload["seq"] for e in admitted] == [1, 2]


def test_a_new_request_on_a_cancelled_thread_is_refused_clearly(tmp_path: Path) -> None:
    app, store = _app(tmp_path, [_read("a.txt", "c1"), AIMessage("alpha")])
    app.invoke({"task": {"goal": "Read a.txt"}}, CFG)
    request_cancel(store, "chat")
    out = app.invoke({"messages": [HumanMessage("something else")]}, CFG)
    assert out["contract"]["goal"] == "Read a.txt"  # no model call was made for it
    assert "new thread_id" in out["error"]["message"]


def test_a_malformed_new_task_fails_the_next_run_not_the_old_result(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, [_read("a.txt", "c1"), AIMessage("alpha")])
    app.invoke({"task": {"goal": "Read a.txt"}}, CFG)
    out = app.invoke({"task": {"goal": "x", "allowed_actions": ["nope"]}}, CFG)
    assert out["status"] == "FAILED" and "not registered" in out["error"]["message"]
    assert out["contract"] is None and out["output"] is None


def test_a_workflow_starts_its_stages_again_for_the_next_request(tmp_path: Path) -> None:
    def answer(text: str) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": "finish", "args": {"output": text}, "id": text}])

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha")
    (ws / "b.txt").write_text("beta")
    replies = [_read("a.txt", "c1"), answer("alpha"), _read("b.txt", "c2"), answer("beta")]
    app = build_graph(
        "workflow",
        model=ScriptedChatModel(replies),
        tools=[FileAdapter(ws)],
        stages=[Stage("read", ("read_file",), "Read the file the task names.")],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        workspace=ws,
    )
    checks = [{"kind": "tool_succeeded", "target": "read_file"}]
    first = app.invoke({"task": {"goal": "Read a.txt", "success_checks": checks}}, CFG)
    assert first["status"] == "COMPLETED", first.get("error")
    out = app.invoke({"task": {"goal": "Read b.txt", "success_checks": checks}}, CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "beta" and out["cursor"] == 1


def test_plan_and_execute_plans_anew_for_the_next_request(tmp_path: Path) -> None:
    def submit(path: str, call_id: str) -> AIMessage:
        step = {"id": "s1", "tool": "read_file", "arguments": {"path": path}}
        calls = [{"name": "submit_plan", "args": {"steps": [step]}, "id": call_id}]
        return AIMessage("", tool_calls=calls)

    def finish(text: str) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": "finish", "args": {"output": text}, "id": text}])

    replies = [submit("a.txt", "p1"), finish("alpha"), submit("b.txt", "p2"), finish("beta")]
    app, store = _app(tmp_path, replies, arch="plan_execute")
    assert app.invoke({"task": {"goal": "Read a.txt"}}, CFG)["status"] == "COMPLETED"
    out = app.invoke({"task": {"goal": "Read b.txt"}}, CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "beta" and out["plan"]["version"] == 2  # ids follow the last plan
    [step] = out["plan"]["steps"]
    assert "beta" in str(out["results"][step["call_id"]]["data"])  # run again, not the old one
    assert len(store.committed("chat")) == 2
    planner = next(
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "p2"
    )
    assert "plan version 2 accepted" in str(planner.content)
