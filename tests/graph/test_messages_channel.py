"""The ``messages`` channel keeps state O(1) in run length, on real SQLite checkpoints.

Its window is bounded, a step writes only its own messages (a DeltaChannel), and a new
process rebuilds it exactly, ids included.
"""

from __future__ import annotations

import sqlite3
import statistics
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph.graph import build_graph
from execgraph.state.reducers import MESSAGES_WINDOW
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def noop(i: int) -> str:
    """Do nothing and say ok."""
    return "ok"


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _run(tmp_path: Path, n: int) -> tuple[dict[str, Any], sqlite3.Connection]:
    replies = [_call("noop", {"i": k}, f"c{k}") for k in range(n)]
    replies.append(_call("finish", {"output": "done"}, "fin"))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[noop],
        checkpointer=SqliteSaver(conn),
        home=tmp_path,
        loop_threshold=10**6,
    )
    checks = [{"kind": "tool_succeeded", "target": "noop"}]
    budgets = {"model_calls": n + 5, "tool_calls": n + 5}
    task = {"task": {"goal": "go", "success_checks": checks, "budgets": budgets}}
    out = app.invoke(task, {"configurable": {"thread_id": "m"}}, durability="sync")
    assert out["status"] == "COMPLETED"
    return out, conn


def test_the_window_is_bounded_and_rebuilt_exactly_by_a_new_process(tmp_path: Path) -> None:
    out, conn = _run(tmp_path, 70)  # past two snapshots of the channel
    messages = out["messages"]
    assert len(messages) <= MESSAGES_WINDOW and isinstance(messages[-2], AIMessage)
    # every call answered: the accepted finish too, the last message
    assert isinstance(messages[-1], ToolMessage) and messages[-1].name == "finish"
    assert not isinstance(messages[1], ToolMessage)
    assert isinstance(messages[0], HumanMessage) and messages[0].content == "go"  # kept
    conn.close()
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    again = build_graph(
        "react",
        model=ScriptedChatModel([]),
        tools=[noop],
        checkpointer=SqliteSaver(conn),
        home=tmp_path,
    )
    rebuilt = again.get_state({"configurable": {"thread_id": "m"}}).values["messages"]
    assert [(m.id, m.content, type(m)) for m in rebuilt] == [
        (m.id, m.content, type(m)) for m in messages
    ]


def test_a_late_step_writes_what_an_early_one_does(tmp_path: Path) -> None:
    _, conn = _run(tmp_path, 120)
    rows = conn.execute(
        "SELECT c.rowid, coalesce(sum(length(w.value)), 0) FROM checkpoints c"
        " LEFT JOIN writes w ON w.checkpoint_id = c.checkpoint_id AND w.channel = 'messages'"
        " WHERE c.checkpoint_ns = '' GROUP BY c.rowid ORDER BY c.rowid"
    ).fetchall()
    written = [int(size) for _, size in rows]
    middle, end = written[40:80], written[80:120]
    assert 0 < statistics.median(end) <= statistics.median(middle) * 1.05
    sql = "SELECT length(checkpoint) FROM checkpoints WHERE checkpoint_ns = '' ORDER BY rowid"
    blobs = [int(r[0]) for r in conn.execute(sql)]
    assert blobs[101] < 4_000  # after the input, admission and 100 steps: no window in it
