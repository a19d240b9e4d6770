"""Every real adapter driven through the executor pipeline, as the architectures use them."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.contracts import ToolResult
from execgraph.tools.adapters import DatabaseAdapter, HttpAdapter, ProcessAdapter
from tests.support.executor import config, make_deps, make_executor, request
from tests.tools.adapters._http_server import Server


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


def _run(
    tmp_path: Path, tools: list[Any], tool: str, args: dict[str, Any], **kw: Any
) -> ToolResult:
    tmp_path.mkdir(parents=True, exist_ok=True)
    app = make_executor(make_deps(tmp_path, tools))
    out = app.invoke({"request": request(tool, args, root=tmp_path, **kw)}, config(tool))
    return ToolResult.model_validate(out["results"]["call-1"])


@pytest.mark.integration
def test_process_through_executor_streams_events_and_hashes(tmp_path: Path) -> None:
    adapter = ProcessAdapter([sys.executable])
    deps = make_deps(tmp_path, [adapter])
    args = {"program": sys.executable, "args": ["-c", "print('hi; rm -rf /')"]}
    out = make_executor(deps).invoke(
        {"request": request("run_process", args, root=tmp_path)}, config()
    )
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.outcome == "succeeded", result.error
    assert "hi; rm -rf /" in str(result.data)  # metacharacters are inert data
    assert any(e.kind.startswith("stdout") or "sha256" in e.kind for e in result.evidence)
    assert any(e.type == "tool.output" for e in deps.store.events("run-1"))


def test_process_outside_allow_list_is_denied_through_executor(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        [ProcessAdapter([sys.executable])],
        "run_process",
        {"program": "/bin/sh", "args": ["-c", "true"]},
    )
    assert result.status == "DENIED" and result.side_effect.committed is False


@pytest.mark.integration
def test_http_get_and_write_through_executor(tmp_path: Path, server: Server) -> None:
    adapter = HttpAdapter(["127.0.0.1"], allow_private=True)
    got = _run(tmp_path, [adapter], "http_get", {"url": server.url("/ok")})
    assert got.outcome == "succeeded" and any(e.kind for e in got.evidence)
    posted = _run(
        tmp_path / "w",
        [adapter],
        "http_post",
        {"url": server.url("/orders"), "json_body": {"sku": "x"}},
        idempotency_key="order-7",
    )
    assert posted.outcome == "succeeded"
    assert "order-7" in server.state.keys  # the executor's key reached the server


def test_http_private_target_refused_through_executor(tmp_path: Path) -> None:
    result = _run(tmp_path, [HttpAdapter(["*"])], "http_get", {"url": "http://169.254.169.254/"})
    assert result.status == "DENIED" and result.error is not None
    assert result.side_effect.committed is False


def test_database_tools_through_executor(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT)")
    adapter = DatabaseAdapter(f"sqlite:///{db}")
    add = adapter.write_tool(
        name="add_order",
        sql="INSERT INTO orders (customer) VALUES (:customer)",
        verify_sql="SELECT customer FROM orders WHERE customer = :customer",
    )
    find = adapter.query_tool(
        name="find_orders", sql="SELECT id, customer FROM orders WHERE customer = :customer"
    )
    hostile = "x'; DROP TABLE orders; --"
    added = _run(tmp_path, [add, find], "add_order", {"customer": hostile})
    assert added.outcome == "succeeded" and any(e.verified for e in added.evidence)
    found = _run(tmp_path / "r", [add, find], "find_orders", {"customer": hostile})
    assert found.outcome == "succeeded" and hostile in str(found.data)


@pytest.mark.integration
def test_tool_output_streams_live_through_the_parent_graph(tmp_path: Path) -> None:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    from execgraph.graph.executor import build_executor
    from execgraph.state.schema import RunState

    deps = make_deps(tmp_path, [ProcessAdapter([sys.executable])])
    code = "import sys; print('out'); print('err', file=sys.stderr)"
    req = request("run_process", {"program": sys.executable, "args": ["-c", code]}, root=tmp_path)
    parent = StateGraph(RunState)
    parent.add_node("executor", build_executor(deps))
    parent.add_conditional_edges(
        START, lambda s: [Send("executor", {"request": req})], ["executor"]
    )
    parent.add_edge("executor", END)
    chunks = list(
        parent.compile().stream({"task": {"goal": "x"}}, stream_mode="custom", subgraphs=True)
    )
    kinds = {c[1].get("stream") for c in chunks if isinstance(c, tuple) and c[1].get("call_id")}
    assert {"stdout", "stderr"} <= kinds, chunks
