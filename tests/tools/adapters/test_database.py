"""DatabaseAdapter against a real SQLite file and a real PostgreSQL database.

Every behavioural test runs on both dialects (``db`` is parametrized); the tables are
created with the plain drivers so the adapter under test never sets up its own world.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict

from state.errors import (
    DeadlineExceeded,
    ObservationStatus,
    PermanentError,
    PolicyDenied,
    TargetNotFound,
    ToolCancelled,
    TransientError,
    VerificationError,
)
from tools.adapters.base import InvokeContext
from tools.adapters.database import DatabaseAdapter, _digest

INJECTION = "x'; DROP TABLE orders; --"

SCHEMA = {
    "sqlite": "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "customer TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL CHECK (qty > 0), "
    "UNIQUE (customer, item))",
    "postgres": "CREATE TABLE orders (id SERIAL PRIMARY KEY, customer TEXT NOT NULL, "
    "item TEXT NOT NULL, qty INTEGER NOT NULL CHECK (qty > 0), UNIQUE (customer, item))",
}
# Statements that run until interrupted (a deadline or a cancel must stop them).
ENDLESS_READ = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) AS n FROM c WHERE x > :floor",
    "postgres": "SELECT pg_sleep(60) AS slept, :floor::int AS floor",
}
ENDLESS_WRITE = {
    "sqlite": "INSERT INTO orders (customer, item, qty) SELECT :customer, 'slow' || x, 1 FROM "
    "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)",
    "postgres": "INSERT INTO orders (customer, item, qty) "
    "SELECT :customer, 'slow', 1 FROM pg_sleep(60)",
}


class OrderIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    customer: str
    item: str
    qty: int


class CustomerIn(BaseModel):
    customer: str  # deliberately not extra="forbid": the adapter must add it


@dataclass
class Db:
    """One test database: its URL, its dialect and a raw (non-adapter) way to run SQL."""

    url: str
    dialect: str
    raw: Callable[[str], list[tuple[Any, ...]]]


def _sqlite_raw(path: Path) -> Callable[[str], list[tuple[Any, ...]]]:
    def run(sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(path) as conn:
            return conn.execute(sql).fetchall()

    return run


def _pg_raw(dsn: str) -> Callable[[str], list[tuple[Any, ...]]]:
    import psycopg

    def run(sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    return run


@pytest.fixture(params=["sqlite", "postgres"])
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


def make_ctx(tmp_path: Path, **kw: Any) -> InvokeContext:
    return InvokeContext(run_id="run-1", call_id="call-1", attempt_id="att-1",
                         workspace_root=tmp_path, **kw)  # fmt: skip


def count(db: Db) -> int:
    return int(db.raw("SELECT count(*) FROM orders")[0][0])


def shop(db: Db) -> DatabaseAdapter:
    adapter = DatabaseAdapter(db.url, name="shop")
    adapter.query_tool(
        name="find_orders",
        sql="SELECT id, item, qty FROM orders WHERE customer = :customer ORDER BY id",
        params_model=CustomerIn,
    )
    adapter.write_tool(
        name="add_order",
        sql="INSERT INTO orders (customer, item, qty) VALUES (:customer, :item, :qty) RETURNING id",
        params_model=OrderIn,
        verify_sql="SELECT id, customer, item, qty FROM orders WHERE id = :id",
    )
    return adapter


def call(adapter: DatabaseAdapter, tool: str, ctx: InvokeContext, **args: Any) -> Any:
    spec = next(t for t in adapter.tools() if t.name == tool)
    return spec.run(spec.input_model(**args), ctx)


# --------------------------------------------------------------------------- reads


def test_query_returns_bound_rows_with_hashed_evidence(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    out = call(adapter, "find_orders", make_ctx(tmp_path), customer="ada")
    assert [r["item"] for r in out.data["rows"]] == ["lamp", "desk"]
    assert out.truncated is False and out.committed is None
    (ev,) = out.evidence
    value = json.loads(ev.value)
    assert ev.kind == "db_query_result" and ev.call_id == "call-1" and ev.verified
    assert value == {"row_count": 2, "rows_sha256": _digest(out.data["rows"]), "truncated": False}
    assert ev.source_id.startswith("db:shop:find_orders:")
    spec = adapter.tools()[0]
    assert spec.effect == "read" and spec.locks == ()
    with pytest.raises(pydantic.ValidationError):  # the user's model gained extra="forbid"
        spec.input_model(customer="ada", sql="DROP TABLE orders")


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders WHERE customer = :customer",
        "UPDATE orders SET qty = 99 WHERE customer = :customer",
        "INSERT INTO orders (customer, item, qty) VALUES (:customer, 'sneaky', 1)",
    ],
)
def test_read_only_tool_cannot_write(db: Db, tmp_path: Path, sql: str) -> None:
    adapter = DatabaseAdapter(db.url)
    spec = adapter.query_tool(name="mislabelled", sql=sql)
    before = db.raw("SELECT id, customer, item, qty FROM orders ORDER BY id")
    with pytest.raises(PolicyDenied) as info:
        spec.run(spec.input_model(customer="ada"), make_ctx(tmp_path))
    assert info.value.status is ObservationStatus.DENIED
    assert "read-only" in info.value.message
    assert db.raw("SELECT id, customer, item, qty FROM orders ORDER BY id") == before


def test_sqlite_read_tool_cannot_attach_another_file(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    sqlite3.connect(path).close()
    spec = DatabaseAdapter(f"sqlite:///{path}").query_tool(
        name="attach", sql="ATTACH DATABASE :other AS other"
    )
    with pytest.raises(PolicyDenied):
        spec.run(spec.input_model(other=str(tmp_path / "b.db")), make_ctx(tmp_path))
    assert not (tmp_path / "b.db").exists()


def test_rows_are_bounded_by_the_output_budget(db: Db, tmp_path: Path) -> None:
    db.raw(
        "INSERT INTO orders (customer, item, qty) SELECT 'many', 'item-' || x, 1 FROM "
        + ("(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300) "
           "SELECT x FROM c) AS s" if db.dialect == "sqlite" else "generate_series(1, 300) AS x")
    )  # fmt: skip
    adapter = shop(db)
    out = call(adapter, "find_orders", make_ctx(tmp_path, output_budget=2000), customer="many")
    assert out.truncated is True
    assert 0 < len(out.data["rows"]) < 300
    assert len(json.dumps(out.data["rows"])) <= 2000
    assert json.loads(out.evidence[0].value)["truncated"] is True
    capped = adapter.query_tool(
        name="first_five", sql="SELECT item FROM orders WHERE customer = :c", max_rows=5
    )
    out = capped.run(capped.input_model(c="many"), make_ctx(tmp_path))
    assert len(out.data["rows"]) == 5 and out.truncated is True


# --------------------------------------------------------------------------- writes


def test_write_returns_rows_affected_and_read_after_write_evidence(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    out = call(adapter, "add_order", make_ctx(tmp_path), customer="cy", item="rug", qty=3)
    assert out.committed is True
    assert out.data["rows_affected"] == 1
    new_id = out.data["returned"][0]["id"]
    assert out.data["verified_rows"] == [{"id": new_id, "customer": "cy", "item": "rug", "qty": 3}]
    write_ev, rb_ev = out.evidence
    assert write_ev.kind == "db_write" and json.loads(write_ev.value) == {"rows_affected": 1}
    assert rb_ev.kind == "db_read_after_write" and rb_ev.verified
    assert json.loads(rb_ev.value) == {
        "row_count": 1, "rows_sha256": _digest(out.data["verified_rows"]), "truncated": False,
    }  # fmt: skip
    assert db.raw(f"SELECT customer, item, qty FROM orders WHERE id = {new_id}") == [
        ("cy", "rug", 3)
    ]
    spec = next(t for t in adapter.tools() if t.name == "add_order")
    assert spec.effect == "write" and spec.locks == ("database:shop",)
    args = spec.input_model(customer="cy", item="rug", qty=3)
    assert spec.verify is not None
    (again,) = spec.verify(args, out, make_ctx(tmp_path))
    assert (again.kind, again.value, again.verified) == (rb_ev.kind, rb_ev.value, True)


def test_injection_in_parameters_is_inert(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    out = call(adapter, "add_order", make_ctx(tmp_path), customer=INJECTION, item="x", qty=1)
    assert out.data["verified_rows"][0]["customer"] == INJECTION
    found = call(adapter, "find_orders", make_ctx(tmp_path), customer=INJECTION)
    assert [r["item"] for r in found.data["rows"]] == ["x"]
    nothing = call(adapter, "find_orders", make_ctx(tmp_path), customer="' OR '1'='1")
    assert nothing.data["rows"] == []
    assert count(db) == 4  # the table survived, with the literal name stored in it
    assert db.raw("SELECT customer FROM orders WHERE item = 'x'") == [(INJECTION,)]


def test_constraint_violations_are_permanent_and_commit_nothing(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    with pytest.raises(PermanentError) as dup:
        call(adapter, "add_order", make_ctx(tmp_path), customer="ada", item="lamp", qty=1)
    with pytest.raises(PermanentError) as check:
        call(adapter, "add_order", make_ctx(tmp_path), customer="new", item="bad", qty=0)
    for err in (dup.value, check.value):
        assert "constraint" in err.message and not err.retryable
        assert "duplicate" not in err.message.lower() and "failed" not in err.message.lower()
    assert count(db) == 3


def test_expect_rows_reports_not_found(db: Db, tmp_path: Path) -> None:
    spec = DatabaseAdapter(db.url).write_tool(
        name="set_qty", sql="UPDATE orders SET qty = :qty WHERE id = :id", expect_rows=True
    )
    with pytest.raises(TargetNotFound):
        spec.run(spec.input_model(qty=5, id=999), make_ctx(tmp_path))
    out = spec.run(spec.input_model(qty=5, id=1), make_ctx(tmp_path))
    assert out.data["rows_affected"] == 1 and out.evidence[0].verified is False


def test_verify_and_reconcile_read_back(db: Db, tmp_path: Path) -> None:
    adapter = DatabaseAdapter(db.url)
    spec = adapter.write_tool(
        name="rename", sql="UPDATE orders SET item = :item WHERE customer = :customer",
        verify_sql="SELECT id FROM orders WHERE customer = :customer AND item = :item",
    )  # fmt: skip
    assert spec.reconcile is not None and spec.verify is not None
    args = spec.input_model(customer="bob", item="sofa")
    assert spec.reconcile(args, make_ctx(tmp_path)) is None  # not visible: cannot tell
    out = spec.run(args, make_ctx(tmp_path))
    found = spec.reconcile(args, make_ctx(tmp_path))
    assert found is not None and found.committed is True
    db.raw("UPDATE orders SET item = 'gone' WHERE customer = 'bob'")
    with pytest.raises(VerificationError):
        spec.verify(args, out, make_ctx(tmp_path))


# --------------------------------------------------------------------------- deadline and cancel


def test_deadline_stops_a_read_as_transient(db: Db, tmp_path: Path) -> None:
    spec = DatabaseAdapter(db.url).query_tool(name="slow", sql=ENDLESS_READ[db.dialect])
    with pytest.raises(TransientError) as info:
        spec.run(spec.input_model(floor=0), make_ctx(tmp_path, deadline=time.time() + 0.5))
    assert "deadline" in info.value.message and info.value.retryable


def test_cancel_stops_a_read(db: Db, tmp_path: Path) -> None:
    spec = DatabaseAdapter(db.url).query_tool(name="slow", sql=ENDLESS_READ[db.dialect])
    ctx = make_ctx(tmp_path)
    timer = threading.Timer(0.5, ctx.cancel.set)
    timer.start()
    try:
        with pytest.raises(ToolCancelled) as info:
            spec.run(spec.input_model(floor=0), ctx)
    finally:
        timer.cancel()
    assert info.value.status is ObservationStatus.CANCELLED


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
def test_interrupted_write_commits_nothing(db: Db, tmp_path: Path, stop: str) -> None:
    spec = DatabaseAdapter(db.url).write_tool(name="flood", sql=ENDLESS_WRITE[db.dialect])
    ctx = make_ctx(tmp_path, deadline=time.time() + 0.5 if stop == "deadline" else None)
    timer = threading.Timer(0.5, ctx.cancel.set)
    if stop == "cancel":
        timer.start()
    try:
        with pytest.raises(TransientError if stop == "deadline" else ToolCancelled):
            spec.run(spec.input_model(customer="flood"), ctx)
    finally:
        timer.cancel()
    assert count(db) == 3


def test_lock_wait_ends_transient_at_the_deadline(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    if db.dialect == "sqlite":
        holder: Any = sqlite3.connect(db.url.removeprefix("sqlite:///"), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    else:
        import psycopg

        holder = psycopg.connect(db.url)
        holder.execute("LOCK TABLE orders IN EXCLUSIVE MODE")
    try:
        with pytest.raises(TransientError):
            call(adapter, "add_order", make_ctx(tmp_path, deadline=time.time() + 0.5),
                 customer="zed", item="z", qty=1)  # fmt: skip
    finally:
        holder.rollback()
        holder.close()
    assert count(db) == 3


def test_already_cancelled_or_expired_calls_do_not_start(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)
    cancelled = make_ctx(tmp_path)
    cancelled.cancel.set()
    with pytest.raises(ToolCancelled):
        call(adapter, "add_order", cancelled, customer="q", item="q", qty=1)
    with pytest.raises(DeadlineExceeded):
        call(adapter, "add_order", make_ctx(tmp_path, deadline=time.time() - 1),
             customer="q", item="q", qty=1)  # fmt: skip
    adapter.close()
    with pytest.raises(PermanentError):
        call(adapter, "find_orders", make_ctx(tmp_path), customer="ada")
    assert count(db) == 3


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


def test_url_secrets_never_reach_messages(tmp_path: Path) -> None:
    url = "postgresql://user:hunter2@127.0.0.1:1/none"
    spec = DatabaseAdapter(url).query_tool(name="q", sql="SELECT 1 AS one")
    assert "hunter2" not in repr(DatabaseAdapter(url))
    with pytest.raises(TransientError) as info:
        spec.run(spec.input_model(), make_ctx(tmp_path))
    assert "hunter2" not in info.value.message and "127.0.0.1" not in info.value.message


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) AS n FROM gone",
         PolicyDenied),
        ("SELECT nextval('orders_id_seq') AS n", PolicyDenied),
        # The adapter always runs a query first, so the transaction cannot be flipped.
        ("SET TRANSACTION READ WRITE", PermanentError),
    ],
)  # fmt: skip
def test_postgres_read_only_has_no_back_door(
    postgres_database: str, tmp_path: Path, sql: str, error: type[Exception]
) -> None:
    raw = _pg_raw(postgres_database)
    raw(SCHEMA["postgres"])
    raw("INSERT INTO orders (customer, item, qty) VALUES ('ada', 'lamp', 1)")
    spec = DatabaseAdapter(postgres_database).query_tool(name="sneaky", sql=sql)
    with pytest.raises(error):
        spec.run(spec.input_model(), make_ctx(tmp_path))
    assert raw("SELECT count(*), max(id) FROM orders") == [(1, 1)]


def test_concurrent_writes_from_many_threads(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)

    def add(i: int) -> int:
        ctx = make_ctx(tmp_path, deadline=time.time() + 60)
        out = call(adapter, "add_order", ctx, customer=f"c{i}", item="thing", qty=1)
        return int(out.data["rows_affected"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sum(pool.map(add, range(24))) == 24
    assert count(db) == 27
