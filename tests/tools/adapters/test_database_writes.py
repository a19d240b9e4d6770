"""DatabaseAdapter write tools: read-after-write evidence, inert injection, constraints."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from execgraph.state.errors import PermanentError, TargetNotFound, VerificationError
from execgraph.tools.adapters.database import DatabaseAdapter, _digest
from tests.tools.adapters.database_helpers import Db, call, count, make_ctx, shop

INJECTION = "x'; DROP TABLE orders; --"


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


def test_concurrent_writes_from_many_threads(db: Db, tmp_path: Path) -> None:
    adapter = shop(db)

    def add(i: int) -> int:
        ctx = make_ctx(tmp_path, deadline=time.time() + 60)
        out = call(adapter, "add_order", ctx, customer=f"c{i}", item="thing", qty=1)
        return int(out.data["rows_affected"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sum(pool.map(add, range(24))) == 24
    assert count(db) == 27
