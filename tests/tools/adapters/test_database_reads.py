"""DatabaseAdapter query tools: bound rows, hashed evidence, budgets, no way to write."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pydantic
import pytest

from execgraph.state.errors import (
    ObservationStatus,
    PolicyDenied,
    ToolDeclarationError,
)
from execgraph.tools.adapters.database import DatabaseAdapter, _digest
from tests.tools.adapters.database_helpers import SCHEMA, Db, _pg_raw, call, make_ctx, shop

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
    before = db.raw("SELECT id, customer, item, qty FROM orders ORDER BY id")
    if db.dialect == "postgres":  # the read analysis refuses it when declared: nothing runs
        with pytest.raises(ToolDeclarationError, match="read-only"):
            adapter.query_tool(name="mislabelled", sql=sql)
    else:
        spec = adapter.query_tool(name="mislabelled", sql=sql)
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


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) AS n FROM gone",
         PolicyDenied),
        ("SELECT nextval('orders_id_seq') AS n", PolicyDenied),
        ("SELECT id FROM orders FOR UPDATE", PolicyDenied),
        # SET TRANSACTION READ WRITE / set_config are refused when declared (the read
        # analysis, tests/adversarial/test_database.py); the transaction is flipped by a
        # query first anyway, so the server would refuse them too.
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
