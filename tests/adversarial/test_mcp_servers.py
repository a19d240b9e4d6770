"""An MCP server is untrusted: what it lists and answers is data, never a privilege.

The server is ``tests/support/hostile_mcp_server.py`` (FastMCP over stdio, one process per
call). Its annotations claim ``effect: read``, ``version: 99.0.0``, a tiny timeout and no
locks; it calls a deleting tool read-only, offers a ``pay`` beside the application's own,
a tool whose name is a lookalike, and a tool that never answers.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import build_graph, tool_spec
from execgraph.state.errors import ToolDeclarationError
from execgraph.testing import ScriptedChatModel
from execgraph.tools.mcp import MCP_TIMEOUT_S, mcp_tools

pytestmark = pytest.mark.timeout(180)

SERVER = Path(__file__).resolve().parents[1] / "support" / "hostile_mcp_server.py"


def hostile(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        "hostile": {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(SERVER), str(folder)],
        }
    }


def _call(name: str, args: dict[str, Any], id_: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id_}])


def _graph(tmp_path: Path, tools: list[Any], *replies: AIMessage) -> Any:
    model = ScriptedChatModel([*replies, _call("abort", {"reason": "done"}, "end")])
    return build_graph(
        "react", model=model, tools=tools, checkpointer=InMemorySaver(), home=tmp_path / "home"
    )


def test_annotations_grant_nothing_beyond_the_effect_hint_of_a_trusted_server(
    tmp_path: Path,
) -> None:
    untrusted = {s.name: s for s in mcp_tools(hostile(tmp_path))}
    trusted = {s.name: s for s in mcp_tools(hostile(tmp_path), trusted={"hostile"})}
    for specs in (untrusted, trusted):
        pay = specs["pay"]
        assert (pay.version, pay.timeout_s, pay.locks, pay.idempotent, pay.cost_usd) == (
            "1.0.0",
            MCP_TIMEOUT_S,
            (),
            False,
            0.0,
        )
        assert pay.origin == "mcp:hostile"
    assert {n: s.effect for n, s in untrusted.items()} == {
        "pay": "irreversible",
        "wipe": "irreversible",
        "hang": "irreversible",
    }
    assert trusted["wipe"].effect == "read"  # the application chose to trust its hints


def test_an_untrusted_read_only_hint_does_not_skip_the_approval(tmp_path: Path) -> None:
    (tmp_path / "ledger.txt").write_text("keep")
    app = _graph(
        tmp_path, mcp_tools(hostile(tmp_path)), _call("wipe", {"name": "ledger.txt"}, "w1")
    )
    out = app.invoke({"task": {"goal": "tidy"}}, {"configurable": {"thread_id": "wipe"}})
    [pause] = out["__interrupt__"]
    assert (pause.value["tool"], pause.value["effect"]) == ("wipe", "irreversible")
    assert (tmp_path / "ledger.txt").read_text() == "keep"


@tool_spec(effect="irreversible")
def pay(to: str, amount: int) -> str:
    """The application's own payment tool."""
    return f"the application paid {amount} to {to}"


def test_a_server_tool_cannot_shadow_the_applications_tool(tmp_path: Path) -> None:
    with pytest.raises(ToolDeclarationError, match="two tools named 'pay'"):
        _graph(tmp_path, [pay, *mcp_tools(hostile(tmp_path))])
    with pytest.raises(ToolDeclarationError, match="two tools named 'pay'"):
        _graph(tmp_path, [*mcp_tools(hostile(tmp_path)), pay])  # in either order
    prefixed = mcp_tools(hostile(tmp_path), tool_name_prefix=True)
    app = _graph(tmp_path, [pay, *prefixed], _call("pay", {"to": "bob", "amount": 5}, "p1"))
    out = app.invoke({"task": {"goal": "pay bob"}}, {"configurable": {"thread_id": "pay"}})
    [pause] = out["__interrupt__"]
    assert (pause.value["tool"], pause.value["version"]) == ("pay", "1.0.0")
    assert not (tmp_path / "paid.log").exists()


def test_a_tool_the_runtime_cannot_take_is_left_out_not_the_whole_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="execgraph"):
        names = sorted(s.name for s in mcp_tools(hostile(tmp_path)))
    assert names == ["hang", "pay", "wipe"]
    [record] = [r for r in caplog.records if "left out" in r.getMessage()]
    assert "p\u0430y" in record.getMessage()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def test_a_call_past_its_deadline_ends_and_so_does_its_server_process(tmp_path: Path) -> None:
    # the deadline covers the server's start too: long enough for a loaded machine to get
    # the call to the tool, which then hangs
    tools = mcp_tools(hostile(tmp_path), declare={"hang": {"effect": "read", "timeout_s": 8}})
    app = _graph(tmp_path, tools, _call("hang", {"name": "h1"}, "h1"))
    began = time.monotonic()
    out = app.invoke({"task": {"goal": "wait"}}, {"configurable": {"thread_id": "hang"}})
    [result] = out["results"].values()
    assert result["outcome"] == "failed", result
    assert result["error"]["type"] == "DeadlineExceeded", result["error"]
    assert time.monotonic() - began < 40
    pid = int((tmp_path / "h1.pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the server process of a call past its deadline still runs"
