"""Helpers shared by the DatabaseAdapter suites: the shop schema, raw SQL runners, calls."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from execgraph.tools.adapters.database import DatabaseAdapter
from execgraph.tools.invocation import InvokeContext

SCHEMA = {
    "sqlite": "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "customer TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL CHECK (qty > 0), "
    "UNIQUE (customer, item))",
    "postgres": "CREATE TABLE orders (id SERIAL PRIMARY KEY, customer TEXT NOT NULL, "
    "item TEXT NOT NULL, qty INTEGER NOT NULL CHECK (qty > 0), UNIQUE (customer, item))",
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
