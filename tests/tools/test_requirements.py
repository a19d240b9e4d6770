"""A tool's declared needs are checked at admission: a need not met refuses the task with
DependencyUnavailable before any model or tool call, instead of failing at first use."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from execgraph import ScriptedChatModel, build_graph, tool_spec
from execgraph.state.errors import AdmissionError, DependencyUnavailable
from execgraph.tools.adapters.database import DatabaseAdapter
from execgraph.tools.requirements import Requirement, binary, unmet

FINISH = {"tool_calls": [{"name": "finish", "args": {"output": "done"}}]}
CONFIG: Any = {"configurable": {"thread_id": "deps-1"}}


def _run(tmp_path: Path, tools: list[Any], task: dict[str, Any] | None = None) -> Any:
    model = ScriptedChatModel([FINISH])
    app = build_graph("react", model=model, tools=tools, home=tmp_path)
    out = app.invoke({"task": task or {"goal": "Look something up."}}, CONFIG)
    return out, model


def _db(url: str) -> DatabaseAdapter:
    db = DatabaseAdapter(url, name="shop")
    db.query_tool(name="count_orders", sql="SELECT count(*) AS n FROM orders")
    return db


def test_a_missing_sqlite_database_is_refused_at_admission(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    out, model = _run(tmp_path, _db(f"sqlite:///{path}").tools())
    assert out["status"] == "FAILED"
    assert out["error"]["type"] == "DependencyUnavailable"
    assert "the database 'shop': its SQLite file does not exist" in out["error"]["message"]
    assert str(path) not in out["error"]["message"]  # the URL never shows
    assert model.remaining == 1  # no model call spent
    sqlite3.connect(path).execute("CREATE TABLE orders (id INTEGER)").connection.close()
    out, _ = _run(tmp_path / "again", _db(f"sqlite:///{path}").tools())
    assert out["status"] == "COMPLETED"


def test_only_the_tools_the_task_may_use_are_checked(tmp_path: Path) -> None:
    @tool_spec(effect="read", requires=[binary("execgraph-no-such-program")])
    def render(page: str) -> str:
        """Render a page."""
        return page

    @tool_spec(effect="read")
    def look(q: str) -> str:
        """Look."""
        return q

    out, _ = _run(tmp_path, [render, look])
    assert out["error"]["type"] == "DependencyUnavailable"
    assert "'execgraph-no-such-program' is not installed" in out["error"]["message"]
    out, _ = _run(tmp_path / "b", [render, look], {"goal": "Look.", "allowed_actions": ["look"]})
    assert out["status"] == "COMPLETED"
    assert issubclass(DependencyUnavailable, AdmissionError)


def test_a_check_that_raises_is_a_need_not_met_and_each_key_is_checked_once() -> None:
    calls: list[str] = []

    def broken(timeout_s: float) -> str | None:
        calls.append("x")
        raise RuntimeError("secret://password@host")

    need = Requirement("x", "the thing", broken)
    assert unmet([need, need]) == ["the thing: its check failed"]
    assert calls == ["x"]


@pytest.mark.integration
def test_postgres_reachable_or_refused(tmp_path: Path, postgres_database: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    out, _ = _run(tmp_path / "up", _db(postgres_database).tools())
    assert out["status"] == "COMPLETED"
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out, model = _run(tmp_path / "down", _db(f"postgresql://u:pw@127.0.0.1:{port}/x").tools())
    assert out["error"]["type"] == "DependencyUnavailable"
    assert "does not accept a connection" in out["error"]["message"]
    assert "pw" not in out["error"]["message"] and model.remaining == 1
