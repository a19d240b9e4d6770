"""MCP tools: effect classes from the server's annotations, run through a compiled graph.

The server is ``tests/support/mcp_server.py`` (FastMCP), spawned over stdio by the
client, once to list the tools and once per call.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph import build_graph
from execgraph.testing import ScriptedChatModel
from execgraph.tools.annotations import declared_by_hints
from execgraph.tools.mcp import mcp_tools
from tests.support.mcp_server import PIXEL

pytestmark = pytest.mark.timeout(180)

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


def connections(notes: Path) -> dict[str, dict[str, Any]]:
    return {
        "notes": {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(SERVER), str(notes)],
        }
    }


@pytest.mark.parametrize(
    ("hints", "declared"),
    [
        ({"readOnlyHint": True}, {"effect": "read"}),
        ({"readOnlyHint": True, "destructiveHint": True}, {"effect": "read"}),
        ({"destructiveHint": False}, {"effect": "write", "idempotent": False}),
        (
            {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
            {"effect": "write", "idempotent": True},
        ),
        ({"readOnlyHint": False}, {"effect": "irreversible", "idempotent": False}),
        (
            {"destructiveHint": True, "idempotentHint": True},
            {"effect": "irreversible", "idempotent": True},
        ),
        ({"title": "Notes", "openWorldHint": True}, None),  # no effect hint: undeclared
        ({}, None),
    ],
)
def test_annotations_decide_the_effect(hints: dict[str, Any], declared: Any) -> None:
    assert declared_by_hints(hints) == declared


def test_building_graphs_loads_no_mcp_until_mcp_tools_are_asked_for() -> None:
    code = (
        "import sys\nfrom execgraph import build_graph, tool_spec, from_langchain\n"
        "import execgraph.tools\n"
        "print([m for m in sys.modules if m.split('.')[0] in ('mcp', 'langchain_mcp_adapters')])"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def _call(*calls: tuple[str, str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, i, a in calls])


def test_a_trusted_servers_tools_run_through_the_executor_as_their_annotations_declare(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "old.txt").write_text("keep me")
    specs = {s.name: s for s in mcp_tools(connections(notes), trusted={"notes"})}
    assert {n: (s.effect, s.idempotent) for n, s in specs.items()} == {
        "read_note": ("read", False),
        "put_note": ("write", True),
        "delete_note": ("irreversible", False),
        "touch": ("irreversible", False),  # unannotated: as any undeclared tool
        "send_and_vanish": ("irreversible", False),
        "snapshot": ("read", False),
    }
    model = ScriptedChatModel(
        [
            _call(
                ("put_note", "p1", {"name": "new.txt", "text": "hello"}),
                ("read_note", "r1", {"name": "old.txt"}),
            ),
            _call(("delete_note", "d1", {"name": "old.txt"})),
            _call(("finish", "f1", {"output": "saved new.txt; old.txt says keep me"})),
        ]
    )
    app = build_graph(
        "react",
        model=model,
        tools=list(specs.values()),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    cfg = {"configurable": {"thread_id": "mcp"}}
    task = {
        "goal": "tidy the notes",
        "success_checks": [{"kind": "output_contains", "value": "keep me"}],
    }
    out = app.invoke({"task": task}, cfg)
    [pause] = out["__interrupt__"]  # the destructive tool waits for a person
    assert (pause.value["tool"], pause.value["effect"]) == ("delete_note", "irreversible")
    assert (notes / "new.txt").read_text() == "hello"  # the write ran without one
    by_tool = {r["tool_name"]: r for r in out["results"].values()}
    assert by_tool["read_note"]["data"] == "keep me" and by_tool["read_note"]["status"] == "OK"
    assert by_tool["put_note"]["side_effect"]["committed"] is True
    out = app.invoke(Command(resume={pause.id: {"action": "reject", "reason": "keep it"}}), cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert (notes / "old.txt").exists()  # rejected: never sent to the server


def test_a_server_error_is_the_tools_message_for_the_model(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    tools = mcp_tools(connections(notes), trusted={"notes"})
    [reader] = [s for s in tools if s.name == "read_note"]
    model = ScriptedChatModel(
        [
            _call(("read_note", "r1", {"name": "missing.txt"})),
            _call(("abort", "a1", {"reason": "x"})),
        ]
    )
    app = build_graph(
        "react", model=model, tools=[reader], checkpointer=InMemorySaver(), home=tmp_path
    )
    out = app.invoke({"task": {"goal": "read"}}, {"configurable": {"thread_id": "err"}})
    [result] = out["results"].values()
    assert result["status"] == "RETRYABLE_ERROR" and result["error"]["type"] == "ModelRetry"
    assert "no note named 'missing.txt'" in result["error"]["message"]


def test_declare_overrides_what_the_server_says(tmp_path: Path) -> None:
    specs = mcp_tools(
        connections(tmp_path), declare={"touch": {"effect": "write", "timeout_s": 20}}
    )
    [touch] = [s for s in specs if s.name == "touch"]
    assert (touch.effect, touch.timeout_s) == ("write", 20)


def test_a_reply_lost_after_a_write_is_unknown_not_failed(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    tools = mcp_tools(connections(notes), trusted={"notes"})
    [sender] = [s for s in tools if s.name == "send_and_vanish"]
    assert sender.effect == "irreversible"
    model = ScriptedChatModel(
        [
            _call(("send_and_vanish", "s1", {"name": "out.txt"})),
            _call(("abort", "a1", {"reason": "x"})),
        ]
    )
    app = build_graph(
        "react",
        model=model,
        tools=[sender],
        checkpointer=InMemorySaver(),
        home=tmp_path,
        policy=[{"tool": "send_and_vanish", "decision": "allow", "override": True}],
    )
    out = app.invoke({"task": {"goal": "send"}}, {"configurable": {"thread_id": "lost"}})
    [result] = out["results"].values()
    assert (notes / "out.txt").read_text() == "sent"  # the server did write
    assert result["outcome"] == "unknown" and result["error"]["type"] == "ResponseLostError"
    assert result["side_effect"]["committed"] is None  # nobody can tell: reconcile first


def test_an_image_reaches_the_model_as_an_image_block_not_base64_text(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    [snapshot] = [
        s for s in mcp_tools(connections(notes), trusted={"notes"}) if s.name == "snapshot"
    ]
    model = ScriptedChatModel(
        [
            _call(("snapshot", "s1", {"name": "plan.txt"})),
            _call(("finish", "f1", {"output": "a picture of plan.txt"})),
        ]
    )
    app = build_graph(
        "react", model=model, tools=[snapshot], checkpointer=InMemorySaver(), home=tmp_path
    )
    out = app.invoke({"task": {"goal": "look"}}, {"configurable": {"thread_id": "img"}})
    assert out["status"] == "COMPLETED", out.get("error")
    [told] = [m for m in model.calls[1] if isinstance(m, ToolMessage)]
    assert isinstance(told.content, list)
    text, image = told.content
    assert image == {
        "type": "image",
        "base64": base64.b64encode(PIXEL).decode(),
        "mime_type": "image/png",
    }
    assert text["type"] == "text" and "snapshot of plan.txt" in text["text"]
    assert base64.b64encode(PIXEL).decode() not in text["text"]  # bytes once, as an image
