"""Security battery, hostile arguments: path escapes, shell injection, SSRF, SQL that writes."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from execgraph.state.errors import PathEscapeError
from execgraph.state.events import EventType
from execgraph.tools import tool_spec
from execgraph.tools.adapters import DatabaseAdapter, FileAdapter, HttpAdapter, ProcessAdapter
from tests.reliability.security_helpers import _refused, _result, _run
from tests.support.executor import config, make_deps, make_executor, request
from tests.tools.adapters._http_server import LoopbackOnly, Server

# ----------------------------------------------------------------------------- files

TRAVERSALS = {
    "dotdot": "../escape.txt",
    "nested-dotdot": "notes/../../escape.txt",
    "absolute": "{outside}/escape.txt",
    "backslash": "..\\escape.txt",
    "nul-byte": "report.txt\x00../../escape.txt",
    "fullwidth-solidus": "..\uff0fescape.txt",
    "fullwidth-dots": "\uff0e\uff0e/escape.txt",
    "one-dot-leaders": "\u2024\u2024/escape.txt",
    "small-full-stops": "\ufe52\ufe52/escape.txt",
    "symlink-escape": "link/escape.txt",
}


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    os.symlink(outside, ws / "link")
    return ws, outside


@pytest.mark.parametrize("case", sorted(TRAVERSALS))
def test_path_traversal_is_refused_and_writes_nothing(
    sandbox: tuple[Path, Path], tmp_path: Path, case: str
) -> None:
    ws, outside = sandbox
    path = TRAVERSALS[case].format(outside=outside)
    deps = make_deps(tmp_path, [FileAdapter(ws)])
    app = make_executor(deps)
    args = {"path": path, "content": "pwned"}
    result = _result(app.invoke({"request": request("write_file", args, root=ws)}, config()))
    _refused(result, "PathEscapeError")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not (tmp_path / "escape.txt").exists()
    assert sorted(p.name for p in ws.iterdir()) == ["link"]
    assert deps.store.pending() == []


@pytest.mark.parametrize("case", sorted(TRAVERSALS))
@pytest.mark.parametrize("tool", ["write_file", "read_file"])
def test_a_path_escape_is_refused_at_validate_before_the_tool_runs(
    sandbox: tuple[Path, Path], tmp_path: Path, case: str, tool: str
) -> None:
    ws, outside = sandbox
    deps = make_deps(tmp_path, [FileAdapter(ws)])
    args = {"path": TRAVERSALS[case].format(outside=outside)}
    if tool == "write_file":
        args["content"] = "pwned"
    out = make_executor(deps).invoke({"request": request(tool, args, root=ws)}, config())
    result = _result(out)
    _refused(result, "PathEscapeError")
    assert result.error is not None and result.error.phase == "validate"  # the stage that refused
    types = [e.type for e in deps.store.events("run-1", call_id="call-1")]
    assert EventType.TOOL_VALIDATION_FAILED in types and EventType.TOOL_STARTED not in types
    assert deps.store.get("run-1:call-1") is None  # nothing reserved: nothing ran


def test_a_path_escape_the_tool_itself_finds_is_reported_at_execute(tmp_path: Path) -> None:
    @tool_spec(effect="write")
    def move(name: str) -> str:
        """A tool that confines its own paths (its argument is not declared a path)."""
        raise PathEscapeError("the destination resolves outside the workspace")

    result = _run(tmp_path, [move], "move", {"name": "x"})
    _refused(result, "PathEscapeError")
    assert result.error is not None and result.error.phase == "execute"


def test_symlink_read_does_not_leak_outside_content(
    sandbox: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, _ = sandbox
    app = make_executor(make_deps(tmp_path, [FileAdapter(ws)]))
    req = request("read_file", {"path": "link/secret.txt"}, root=ws)
    out = app.invoke({"request": req}, config())
    _refused(_result(out), "PathEscapeError")
    assert "top secret" not in json.dumps(out["results"])


# ----------------------------------------------------------------------------- process

INJECTIONS = ["; touch pwned", "$(touch pwned)", "`touch pwned`", "| touch pwned", "&& touch pwned"]


@pytest.mark.integration
@pytest.mark.parametrize("payload", INJECTIONS)
def test_shell_metacharacters_in_arguments_are_inert(tmp_path: Path, payload: str) -> None:
    args = {"program": "echo", "args": [payload]}
    result = _run(tmp_path, [ProcessAdapter(["/bin/echo"])], "run_process", args)
    assert result.outcome == "succeeded", result.error
    assert result.data["stdout"] == payload + "\n"  # printed as text, never interpreted
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "program", ["/bin/sh", "sh", "echo; touch pwned", "echo $(touch pwned)", "bash -c 'id'"]
)
def test_program_outside_allow_list_is_denied(tmp_path: Path, program: str) -> None:
    args = {"program": program, "args": ["-c", "touch pwned"]}
    result = _run(tmp_path, [ProcessAdapter(["/bin/echo"])], "run_process", args)
    _refused(result, "PolicyDenied")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.integration
def test_child_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECGRAPH_TEST_SECRET", "hunter2")
    args = {"program": "python", "args": ["-c", "import os; print(sorted(os.environ))"]}
    result = _run(tmp_path, [ProcessAdapter({"python": sys.executable})], "run_process", args)
    assert result.outcome == "succeeded", result.error
    assert "EXECGRAPH_TEST_SECRET" not in result.data["stdout"]


# ----------------------------------------------------------------------------- HTTP


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


def _http(allowed: list[str], transport: LoopbackOnly, **kw: Any) -> HttpAdapter:
    client = httpx.Client(transport=transport, trust_env=False)
    return HttpAdapter(allowed, client=client, **kw)


SSRF = """
    http://127.0.0.1:{port}/ok  http://localhost:{port}/ok  http://0:{port}/ok
    http://2130706433:{port}/ok  http://0177.0.0.1:{port}/ok  http://0x7f.1:{port}/ok
    http://127.1:{port}/ok  http://[::1]:{port}/ok  http://[::ffff:127.0.0.1]:{port}/ok
    http://[::ffff:7f00:1]:{port}/ok  http://[64:ff9b::7f00:1]:{port}/ok
    http://[2002:7f00:1::]:{port}/ok  http://10.0.0.1/  http://172.16.0.1/
    http://192.168.1.1/  http://169.254.169.254/latest/meta-data/  http://[fe80::1]/
    http://[fc00::1]/  http://user:pw@127.0.0.1:{port}/ok
""".split()  # noqa: SIM905 - a table reads better than one URL per line


@pytest.mark.integration
@pytest.mark.parametrize("url", SSRF)
def test_ssrf_targets_are_refused_before_any_traffic(
    tmp_path: Path, server: Server, url: str
) -> None:
    transport = LoopbackOnly()
    target = url.format(port=server.port)
    _refused(_run(tmp_path, [_http(["*"], transport)], "http_get", {"url": target}), "PolicyDenied")
    assert transport.seen == [] and server.state.hits == []


@pytest.mark.integration
@pytest.mark.parametrize("hop", ["http://10.1.2.3/x", "http://127.0.0.1:{other}/ok", "file:///etc"])
def test_redirect_to_a_disallowed_host_is_not_followed(
    tmp_path: Path, server: Server, hop: str
) -> None:
    other = Server()  # a second local server: any hit on it would be an escape
    try:
        transport = LoopbackOnly()
        adapter = _http([f"127.0.0.1:{server.port}"], transport, allow_private=True)
        to = hop.format(other=other.port)
        url = str(httpx.URL(server.url("/redirect"), params={"to": to}))
        _refused(_run(tmp_path, [adapter], "http_get", {"url": url}), "PolicyDenied")
        assert server.state.hits == [("GET", "/redirect")]
        assert other.state.hits == [] and len(transport.seen) == 1
    finally:
        other.close()


# ----------------------------------------------------------------------------- database


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT)")
        conn.executemany("INSERT INTO orders (customer) VALUES (?)", [("ann",), ("bob",)])
    return db


SNEAKY = {
    "delete": "DELETE FROM orders WHERE customer = :customer",
    "insert": "INSERT INTO orders (customer) VALUES (:customer)",
    "update": "UPDATE orders SET customer = 'x' WHERE customer = :customer",
    "cte-delete": "WITH d AS (SELECT 1) DELETE FROM orders WHERE customer = :customer",
    "drop": "DROP TABLE orders",
}


def _rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, customer FROM orders ORDER BY id").fetchall()


@pytest.mark.parametrize("kind", sorted(SNEAKY))
def test_read_only_sql_tool_cannot_write(tmp_path: Path, shop: Path, kind: str) -> None:
    before = _rows(shop)
    adapter = DatabaseAdapter(f"sqlite:///{shop}")
    tool = adapter.query_tool(name="lookup", sql=SNEAKY[kind])
    args = {"customer": "ann"} if ":customer" in SNEAKY[kind] else {}
    _refused(_run(tmp_path, [tool], "lookup", args), "PolicyDenied")
    assert _rows(shop) == before


def test_sql_injection_in_parameters_is_bound_as_data(tmp_path: Path, shop: Path) -> None:
    before = _rows(shop)
    adapter = DatabaseAdapter(f"sqlite:///{shop}")
    tool = adapter.query_tool(name="find", sql="SELECT id FROM orders WHERE customer = :customer")
    args = {"customer": "ann'; DROP TABLE orders; --"}
    result = _run(tmp_path, [tool], "find", args)
    assert result.outcome == "succeeded" and result.data["rows"] == []
    assert _rows(shop) == before
