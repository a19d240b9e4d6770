"""DatabaseAdapter declaration and connection: placeholders, early errors, hidden secrets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from execgraph.state.errors import TargetNotFound, ToolDeclarationError, TransientError
from execgraph.tools.adapters._sql_text import scan_sql
from execgraph.tools.adapters.database import DatabaseAdapter
from tests.tools.adapters.database_helpers import CustomerIn, _pg_raw, make_ctx

# --------------------------------------------------------------------------- declaration


def test_postgres_percent_and_casts_survive_placeholder_rewriting(
    postgres_database: str, tmp_path: Path
) -> None:
    _pg_raw(postgres_database)("CREATE TABLE t (name TEXT)")
    _pg_raw(postgres_database)("INSERT INTO t VALUES ('50% off'), ('full price')")
    spec = DatabaseAdapter(postgres_database).query_tool(
        name="promo",
        sql="SELECT name, :n::int + 1 AS next, 'a:b' AS lit FROM t "
        "WHERE name LIKE '%\\%%' ESCAPE '\\' -- :not_a_param",
    )
    assert set(spec.input_model.model_fields) == {"n"}
    out = spec.run(spec.input_model(n="41"), make_ctx(tmp_path))
    assert out.data["rows"] == [{"name": "50% off", "next": 42, "lit": "a:b"}]


def test_declaration_errors_are_caught_early(tmp_path: Path) -> None:
    adapter = DatabaseAdapter(f"sqlite:///{tmp_path / 'x.db'}")
    with pytest.raises(ValueError, match="positional"):
        adapter.query_tool(name="q1", sql="SELECT * FROM t WHERE a = ?")
    with pytest.raises(ValueError, match="not fields"):
        adapter.query_tool(name="q2", sql="SELECT :a, :b", params_model=CustomerIn)
    with pytest.raises(ValueError, match="memory"):
        DatabaseAdapter("sqlite:///:memory:")
    with pytest.raises(ValueError):
        DatabaseAdapter("mysql://somewhere/db")
    adapter.query_tool(name="q3", sql="SELECT 1 AS one")
    with pytest.raises(ValueError, match="already"):
        adapter.query_tool(name="q3", sql="SELECT 2 AS two")


@pytest.mark.parametrize(
    ("sql", "dialect", "message"),
    [
        ("SELECT 'open", "sqlite", "unterminated quote"),
        ("SELECT 1 /* open", "sqlite", "unterminated comment"),
        ("SELECT $tag$ open", "postgresql", "unterminated dollar quote"),
        ("SELECT * FROM t WHERE a = $1", "postgresql", "positional"),
        ("SELECT * FROM t WHERE a = ?", "sqlite", "positional"),
    ],
)
def test_a_bad_declared_statement_is_a_declaration_error(
    sql: str, dialect: str, message: str
) -> None:
    with pytest.raises(ToolDeclarationError, match=message):
        scan_sql(sql, dialect)


def test_missing_database_file_is_not_found(tmp_path: Path) -> None:
    spec = DatabaseAdapter(f"sqlite:///{tmp_path / 'absent.db'}").query_tool(
        name="q", sql="SELECT 1 AS one"
    )
    with pytest.raises(TargetNotFound):
        spec.run(spec.input_model(), make_ctx(tmp_path))
    assert not (tmp_path / "absent.db").exists()


def test_missing_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(ImportError, match=r'pip install "execgraph\[postgres\]"'):
        DatabaseAdapter("postgresql://user:secret@127.0.0.1:1/none")


@pytest.mark.integration
def test_url_secrets_never_reach_messages(tmp_path: Path) -> None:
    url = "postgresql://user:hunter2@127.0.0.1:1/none"
    spec = DatabaseAdapter(url).query_tool(name="q", sql="SELECT 1 AS one")
    assert "hunter2" not in repr(DatabaseAdapter(url))
    with pytest.raises(TransientError) as info:
        spec.run(spec.input_model(), make_ctx(tmp_path))
    assert "hunter2" not in info.value.message and "127.0.0.1" not in info.value.message
