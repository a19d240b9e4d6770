"""Values a tool hands back are data: whatever their bytes, a run goes on.

A NUL in a tool's text is stored as it came (JSON escapes it) on every backend; on
PostgreSQL the reads that look inside a stored result must not choke on it, or every later
step of the run would fail to count its outcomes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from execgraph import build_graph, tool_spec
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(120)


@tool_spec(effect="read")
def fetch() -> str:
    """Fetch a record whose text holds a NUL."""
    return "before\x00after"


def _call(name: str, args: dict[str, Any], id_: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id_}])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "sqlite":
        return {"home": tmp_path}
    return {"database": request.getfixturevalue("postgres_database"), "home": tmp_path}


def test_a_nul_in_a_tool_result_does_not_stop_the_run(where: dict[str, Any]) -> None:
    model = ScriptedChatModel(
        [
            _call("fetch", {}, "c1"),
            _call("finish", {"output": "fetched"}, "c2"),
            _call("fetch", {}, "c3"),
            _call("finish", {"output": "fetched again"}, "c4"),
        ]
    )
    app = build_graph("react", model=model, tools=[fetch], **where)
    cfg = {"configurable": {"thread_id": "nul"}}
    task = {"goal": "fetch", "success_checks": [{"kind": "tool_succeeded", "target": "fetch"}]}
    out = app.invoke({"task": task}, cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    [result] = out["results"].values()
    assert result["data"] == "before\x00after"
    out = app.invoke({"messages": [HumanMessage("and again")]}, cfg)  # the run's next turn
    assert out["status"] == "COMPLETED", out.get("error")
