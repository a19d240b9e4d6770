"""Hostile data and statements against the database adapter (issue 20, items 9 and 10).

Real SQLite files and the session's real PostgreSQL cluster. The PostgreSQL DSN connects as
the superuser initdb created, which is exactly the setting where "read-only" used to mean
only "inside a READ ONLY transaction": these tests prove the side doors are shut.
"""

from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from execgraph.state.errors import PermanentError
from execgraph.tools.adapters.database import DatabaseAdapter
from tests.tools.adapters.database_helpers import call, make_ctx

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
