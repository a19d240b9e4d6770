"""DatabaseAdapter batch writes: one transaction per batch, ``partial`` with a recovery
reference when a batch fails after another committed (SQLite and PostgreSQL alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.nodes.executor.stages.invoke import Invoked
from execgraph.nodes.executor.stages.outcome import settle
from execgraph.state.contracts import Outcome
from execgraph.state.errors import ObservationStatus, PermanentError
from execgraph.tools.adapters.database import DatabaseAdapter
from tests.tools.adapters.database_helpers import Db, OrderIn, make_ctx


def _batch(db: Db, batch_size: int) -> DatabaseAdapter:
    adapter = DatabaseAdapter(db.url, name="shop")
    adapter.batch_write_tool(
        name="add_orders",
        sql="INSERT INTO orders (customer, item, qty) VALUES (:customer, :item, :qty)",
        row_model=OrderIn,
        key=("customer", "item"),
        batch_size=batch_size,
    )
    return adapter


def _run(adapter: DatabaseAdapter, tmp_path: Path, rows: list[dict[str, object]]) -> object:
    (spec,) = adapter.tools()
    return spec.run(spec.input_model(rows=rows), make_ctx(tmp_path))


def _items(db: Db) -> list[str]:
    return [r[0] for r in db.raw("SELECT item FROM orders WHERE customer = 'cy' ORDER BY item")]


def test_all_batches_commit(db: Db, tmp_path: Path) -> None:
    rows = [{"customer": "cy", "item": i, "qty": 1} for i in ("a", "b", "c")]
    out = _run(_batch(db, 2), tmp_path, rows)
    assert out.partial is None and out.committed is True  # type: ignore[attr-defined]
    assert out.data["committed"] == ["cy/a", "cy/b", "cy/c"]  # type: ignore[attr-defined]
    assert len(out.evidence) == 2  # type: ignore[attr-defined]  # one per transaction
    assert _items(db) == ["a", "b", "c"]


def test_failure_in_a_later_batch_is_partial_with_a_recovery_ref(db: Db, tmp_path: Path) -> None:
    # batch 2 = (c, bad): the CHECK (qty > 0) of "bad" rolls back "c" with it.
    rows = [{"customer": "cy", "item": i, "qty": 1} for i in ("a", "b", "c")]
    rows.append({"customer": "cy", "item": "bad", "qty": 0})
    rows.append({"customer": "cy", "item": "e", "qty": 1})
    out = _run(_batch(db, 2), tmp_path, rows)
    partial = out.partial  # type: ignore[attr-defined]
    assert partial is not None
    assert partial.committed == ["cy/a", "cy/b"]
    assert partial.pending == ["cy/c", "cy/bad", "cy/e"]
    assert partial.stopped_by.startswith("PermanentError: add_orders violates a database")
    ref = partial.recovery_ref
    assert ref.kind == "database" and ref.ref == "database:shop:add_orders:call-1"
    assert "3 pending" in ref.finish and "2 committed" in ref.undo
    assert _items(db) == ["a", "b"]  # what it says committed is exactly what is durable
    assert out.data["pending_rows"][0] == rows[2]  # type: ignore[attr-defined]
    # Finishing with the pending rows (the bad one fixed) completes the write.
    fixed = [dict(r, qty=1) for r in out.data["pending_rows"]]  # type: ignore[attr-defined]
    again = _run(_batch(db, 2), tmp_path, fixed)
    assert again.partial is None  # type: ignore[attr-defined]
    assert _items(db) == ["a", "b", "bad", "c", "e"]


def test_the_executor_settles_it_partial(db: Db, tmp_path: Path) -> None:
    (spec,) = _batch(db, 1).tools()
    rows = [
        {"customer": "cy", "item": "a", "qty": 1},
        {"customer": "ada", "item": "lamp", "qty": 1},  # UNIQUE (customer, item) of a seed row
    ]
    out = spec.run(spec.input_model(rows=rows), make_ctx(tmp_path))
    settled = settle(
        spec, Invoked(output=out, error=None, running_ms=1), 10_000, lambda b, k: "ref"
    )
    assert settled.outcome is Outcome.PARTIAL and settled.status is ObservationStatus.PARTIAL
    assert settled.side_effect.committed is True
    assert settled.partial is not None and settled.partial.recovery_ref is not None
    assert settled.partial.committed == ["cy/a"] and settled.partial.pending == ["ada/lamp"]


def test_failure_in_the_first_batch_commits_nothing_and_raises(db: Db, tmp_path: Path) -> None:
    rows = [
        {"customer": "ada", "item": "lamp", "qty": 1},
        {"customer": "cy", "item": "a", "qty": 1},
    ]
    with pytest.raises(PermanentError):
        _run(_batch(db, 2), tmp_path, rows)
    assert _items(db) == []
