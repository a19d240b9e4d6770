"""DatabaseAdapter deadlines, cancels and lock waits: stopped statements commit nothing."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import (
    DeadlineExceeded,
    ObservationStatus,
    PermanentError,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.adapters.database import DatabaseAdapter
from tests.tools.adapters.database_helpers import Db, call, count, make_ctx, shop

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
