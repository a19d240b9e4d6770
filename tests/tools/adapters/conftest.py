"""Shared fixtures: FileAdapter workspaces (root, adapter, artifacts, tree), shop databases (db).

A module's own fixture of the same name wins (test_corpus has its own ``adapter``). Every
DatabaseAdapter test that takes ``db`` runs on both dialects (it is parametrized); the tables
are created with the plain drivers so the adapter under test never sets up its own world.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.tools.adapters import FileAdapter
from tests.tools.adapters.database_helpers import SCHEMA, Db, _pg_raw, _sqlite_raw
from tests.tools.adapters.file_helpers import Artifacts


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def adapter(root: Path) -> FileAdapter:
    return FileAdapter(root)


@pytest.fixture
def artifacts() -> Artifacts:
    return Artifacts()


@pytest.fixture
def tree(root: Path, tmp_path: Path) -> Path:
    for rel in ("a.txt", "b.py", "src/m.py", "src/pkg/n.py", "src/pkg/data.json", ".hidden"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("leak")
    os.symlink(outside / "leak.py", root / "leak_link.py")
    os.symlink(outside, root / "outdir")
    os.symlink(root / "src", root / "srclink")  # a directory link is never descended
    return root


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    if request.param == "sqlite":
        path = tmp_path / "shop.db"
        sqlite3.connect(path).close()
        database = Db(f"sqlite:///{path}", "sqlite", _sqlite_raw(path))
    else:
        dsn = request.getfixturevalue("postgres_database")
        database = Db(dsn, "postgres", _pg_raw(dsn))
    database.raw(SCHEMA[database.dialect])
    database.raw(
        "INSERT INTO orders (customer, item, qty) VALUES ('ada', 'lamp', 1), ('ada', 'desk', 2),"
        " ('bob', 'chair', 4)"
    )
    yield database
