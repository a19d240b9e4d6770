"""An MCP server's tools, listed by ``mcp_tools``, offered to a create_agent agent by
ExecutorMiddleware and run through the executor as their annotations declare."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph import ExecutorMiddleware, ScriptedChatModel, mcp_tools
from tests.middleware.agents import call, reply

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "mcp"}}


def test_an_mcp_servers_tools_run_through_the_executor(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "old.txt").write_text("keep me")
    connection = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVER), str(notes)],
    }
    specs = mcp_tools({"notes": connection}, trusted={"notes"})
    model = ScriptedChatModel(
        [
            reply(call("put_note", "p1", name="new.txt", text="hello")),
            reply(call("delete_note", "d1", name="old.txt")),
            "saved new.txt and kept old.txt",
        ]
    )
    middleware = ExecutorMiddleware(home=tmp_path / "home", tools=specs)
    app = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())

    out = app.invoke({"messages": [("user", "tidy the notes")]}, CONFIG)

    assert set(model.tools_offered[0]) == {
        "read_note",
        "put_note",
        "delete_note",
        "touch",
        "send_and_vanish",
        "snapshot",
    }
    assert (notes / "new.txt").read_text() == "hello"  # a write: it ran without a person
    [pause] = out["__interrupt__"]  # the destructive tool waits for one
    assert (pause.value["tool"], pause.value["effect"]) == ("delete_note", "irreversible")
    out = app.invoke(Command(resume={"type": "reject", "message": "keep it"}), CONFIG)
    assert (notes / "old.txt").exists()  # rejected: never sent to the server
    assert out["messages"][-1].content == "saved new.txt and kept old.txt"
