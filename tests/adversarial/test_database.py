"""Hostile data and statements against the database adapter (issue 20, items 9 and 10).

Real SQLite files and the session's real PostgreSQL cluster. The PostgreSQL DSN connects as
the superuser initdb created, which is exactly the setting where "read-only" used to mean
only "inside a READ ONLY transaction": these tests prove the side doors are shut.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import PermanentError, PolicyDenied, ToolDeclarationError
from execgraph.tools.adapters.database import READ_ROLE, DatabaseAdapter
from tests.tools.adapters.database_helpers import SCHEMA, _pg_raw, call, make_ctx

_BIG = 40 * 1024 * 1024  # tens of MB: enough to see, small enough for a shared machine


@pytest.fixture
def big_cell_db(tmp_path: Path) -> Path:
    path = tmp_path / "docs.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body BLOB)")
        conn.execute("INSERT INTO docs (title, body) VALUES ('small', x'00')")
        conn.execute("INSERT INTO docs (title, body) VALUES ('huge', zeroblob(?))", (_BIG,))
    return path


# ---------------------------------------------------------------------- item 10: SQLite cells


@pytest.mark.timeout(120)
def test_a_huge_sqlite_cell_never_materializes_against_a_small_budget(
    big_cell_db: Path, tmp_path: Path
) -> None:
    adapter = DatabaseAdapter(f"sqlite:///{big_cell_db}", max_cell_bytes=256 * 1024)
    adapter.query_tool(name="all_docs", sql="SELECT id, title, body FROM docs ORDER BY id")
    ctx = make_ctx(tmp_path, output_budget=64 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(PermanentError) as info:
            call(adapter, "all_docs", ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "262144 bytes" in str(info.value)  # the message names the limit
    assert "max_cell_bytes" in str(info.value)  # and how to raise it
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes reading past a {_BIG}-byte cell"


def test_cells_under_the_limit_still_read(big_cell_db: Path, tmp_path: Path) -> None:
    adapter = DatabaseAdapter(f"sqlite:///{big_cell_db}")
    adapter.query_tool(name="titles", sql="SELECT id, title FROM docs ORDER BY id")
    out = call(adapter, "titles", make_ctx(tmp_path))
    assert [r["title"] for r in out.data["rows"]] == ["small", "huge"]


def test_writes_are_not_bound_by_the_read_cell_limit(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT)")
    adapter = DatabaseAdapter(f"sqlite:///{path}", max_cell_bytes=1024)
    adapter.write_tool(name="put", sql="INSERT INTO blobs (body) VALUES (:body)")
    out = call(adapter, "put", make_ctx(tmp_path), body="z" * 10_000)
    assert out.committed is True


# ---------------------------------------------------------------------- item 9: PostgreSQL


@pytest.fixture
def pg(postgres_database: str) -> str:
    raw = _pg_raw(postgres_database)
    raw(SCHEMA["postgres"])
    raw("INSERT INTO orders (customer, item, qty) VALUES ('ada', 'lamp', 1), ('bob', 'desk', 2)")
    return postgres_database


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A directory the server's (unprivileged) OS user can write into."""
    path = Path(tempfile.mkdtemp(prefix="execgraph-pgout-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _query(dsn: str, sql: str, **kw: Any) -> Any:
    adapter = DatabaseAdapter(dsn, **kw)
    return adapter.query_tool(name="q", sql=sql)


def _run(spec: Any, tmp_path: Path, **args: Any) -> Any:
    return spec.run(spec.input_model(**args), make_ctx(tmp_path))


def test_superuser_dsn_reads_run_as_an_unprivileged_role(pg: str, tmp_path: Path) -> None:
    spec = _query(pg, "SELECT current_user AS u, session_user AS s, count(*) AS n FROM orders "
                      "GROUP BY 1, 2")  # fmt: skip
    row = _run(spec, tmp_path).data["rows"][0]
    assert row["s"] == "postgres"  # the DSN's superuser ...
    assert row["u"] == READ_ROLE  # ... reads as the adapter's read-only role
    assert row["n"] == 2
    raw = _pg_raw(pg)
    assert raw(f"SELECT rolsuper, rolcanlogin FROM pg_roles WHERE rolname = '{READ_ROLE}'") == [
        (False, False)
    ]


def test_a_configured_read_role_is_used(pg: str, tmp_path: Path) -> None:
    raw = _pg_raw(pg)
    raw("DROP ROLE IF EXISTS analyst_t; CREATE ROLE analyst_t NOLOGIN")
    try:
        raw("GRANT SELECT ON orders TO analyst_t")
        spec = _query(
            pg, "SELECT current_user AS u, count(*) AS n FROM orders", read_role="analyst_t"
        )
        assert _run(spec, tmp_path).data["rows"] == [{"u": "analyst_t", "n": 2}]
    finally:
        raw("DROP OWNED BY analyst_t; DROP ROLE analyst_t")


def _as_user(dsn: str, user: str) -> str:
    return dsn.replace("postgresql://postgres@", f"postgresql://{user}@", 1)


def test_an_unprivileged_dsn_reads_as_itself(pg: str, tmp_path: Path) -> None:
    raw = _pg_raw(pg)
    raw("DROP ROLE IF EXISTS plain_t; CREATE ROLE plain_t LOGIN")
    try:
        raw("GRANT SELECT ON orders TO plain_t")
        spec = _query(_as_user(pg, "plain_t"), "SELECT current_user AS u FROM orders LIMIT 1")
        assert _run(spec, tmp_path).data["rows"] == [{"u": "plain_t"}]
    finally:
        raw("DROP OWNED BY plain_t; DROP ROLE plain_t")


def test_a_privileged_dsn_that_cannot_switch_roles_is_refused(pg: str, tmp_path: Path) -> None:
    raw = _pg_raw(pg)
    raw("DROP ROLE IF EXISTS signaller_t; CREATE ROLE signaller_t LOGIN")
    try:
        raw("GRANT SELECT ON orders TO signaller_t; GRANT pg_signal_backend TO signaller_t")
        spec = _query(_as_user(pg, "signaller_t"), "SELECT count(*) AS n FROM orders")
        with pytest.raises(PolicyDenied, match="read_role"):
            _run(spec, tmp_path)
    finally:
        raw("DROP OWNED BY signaller_t; DROP ROLE signaller_t")


def test_a_privileged_read_role_is_refused(pg: str, tmp_path: Path) -> None:
    spec = _query(pg, "SELECT count(*) AS n FROM orders", read_role="postgres")
    with pytest.raises(PolicyDenied, match="read_role"):
        _run(spec, tmp_path)


# Every statement here was accepted by query_tool and acted on the server as a superuser.
SIDE_EFFECTS = [
    "SELECT dblink_exec(:dsn, 'DELETE FROM orders') AS r",
    "SELECT * FROM dblink(:dsn, 'SELECT 1') AS t(x int)",
    "SELECT lo_export(lo_from_bytea(0, 'x'), '/tmp/x')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
    "SELECT pg_cancel_backend(1)",
    "SELECT pg_reload_conf()",
    "SELECT pg_rotate_logfile()",
    "SELECT set_config('work_mem', '1GB', false)",
    "SELECT set_config('role', 'postgres', true), 1",
    "SELECT query_to_xml('SELECT pg_reload_conf()', true, true, '')",
    "COPY (SELECT 1) TO '/tmp/out.txt'",
    "copy orders to program 'id'",
    "SET ROLE postgres",
    "RESET ROLE",
    "DO $$ BEGIN PERFORM pg_reload_conf(); END $$",
    "CALL some_procedure()",
    "EXPLAIN ANALYZE SELECT 1",
    "LOAD 'plpgsql'",
    # dodges: case, quoting, schema, comments, odd spacing
    "SELECT PG_RELOAD_CONF()",
    'SELECT "pg_reload_conf"()',
    "SELECT pg_catalog . pg_reload_conf ( )",
    "SELECT pg_catalog.\"lo_export\"(1, '/tmp/x')",
    "SELECT pg_reload_conf/* hidden */()",
    "SELECT pg_reload_conf\n--\n()",
    "SELECT 1; SELECT pg_reload_conf()",
    "/* lead */ COPY orders TO STDOUT",
    # the lexer must agree with PostgreSQL's: nested comments, E'' strings, $ in names
    "SELECT 1 /* /* */ ' */ , pg_reload_conf() --'",
    "SELECT E'\\'', pg_reload_conf(), ''",
    "SELECT 1 AS x$a$, pg_reload_conf(), $a$",
    'SELECT U&"pg_reload\\005fconf"()',
]
HARMLESS = [
    "SELECT 'pg_reload_conf()' AS s",
    "SELECT $$dblink_exec($$ AS s",
    "SELECT 1 AS n -- pg_reload_conf()",
    "SELECT 1 AS n /* lo_export() */",
    'SELECT 1 AS "dblink_exec"',
    "WITH t AS (SELECT 1 AS n) SELECT n FROM t",
    "VALUES (1)",
    "TABLE orders",
    "SHOW work_mem",
    "SELECT E'a\\\\' AS s, 2 AS n",
]


@pytest.mark.parametrize("sql", SIDE_EFFECTS)
def test_side_effecting_statements_are_refused_for_read_tools(pg: str, sql: str) -> None:
    with pytest.raises(ToolDeclarationError, match="read-only"):
        _query(pg, sql)


@pytest.mark.parametrize("sql", HARMLESS)
def test_harmless_statements_stay_declarable(pg: str, sql: str) -> None:
    _query(pg, sql)


def test_write_tools_are_not_analysed(pg: str) -> None:
    DatabaseAdapter(pg).write_tool(name="w", sql="SELECT pg_notify('c', 'x')")


def _views(pg: str, server_dir: Path) -> None:
    """Side effects hidden behind views: the statement analysis cannot see these."""
    raw = _pg_raw(pg)
    raw("CREATE EXTENSION IF NOT EXISTS dblink")
    raw(f"CREATE VIEW export_v AS SELECT lo_export(lo_from_bytea(0, 'leak'), "
        f"'{server_dir}/lo.txt') AS r")  # fmt: skip
    raw("CREATE VIEW kill_v AS SELECT pg_terminate_backend(pid) AS r FROM pg_stat_activity "
        "WHERE application_name = 'victim'")  # fmt: skip
    raw("CREATE VIEW reload_v AS SELECT pg_reload_conf() AS r")
    raw(f"CREATE VIEW dblink_v AS SELECT dblink_exec('{pg}', 'DELETE FROM orders') AS r")


@pytest.mark.parametrize("view", ["export_v", "kill_v", "reload_v", "dblink_v"])
def test_side_effects_behind_a_view_are_refused_by_the_role(
    pg: str, tmp_path: Path, server_dir: Path, view: str
) -> None:
    import psycopg

    _views(pg, server_dir)
    with psycopg.connect(pg, application_name="victim", autocommit=True) as victim:
        spec = _query(pg, f"SELECT * FROM {view}")
        with pytest.raises(PolicyDenied):
            _run(spec, tmp_path)
        assert victim.execute("SELECT 1").fetchone() == (1,)  # not terminated
    assert not (server_dir / "lo.txt").exists()
    assert _pg_raw(pg)("SELECT count(*) FROM orders") == [(2,)]


def test_copy_to_a_file_neither_runs_nor_is_reported_refused_after_running(
    pg: str, server_dir: Path
) -> None:
    target = server_dir / "copy.txt"
    with pytest.raises(ToolDeclarationError):
        _query(pg, f"COPY (SELECT 1) TO '{target}'")
    assert not target.exists()
