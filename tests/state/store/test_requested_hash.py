"""A call's execution record keeps both hashes of its arguments, in every backend: as the
model proposed them (``requested_hash``) and as normalized (``args_hash``, what approvals
and retries bind to). A store of the layout before the column is migrated in place; its
old records read with an empty requested hash."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from rich.console import Console

from execgraph.cli.trace import trace_table
from execgraph.state.store import ExecutionStore
from tests.state.store.store_helpers import Opener, reserve
from tests.support.request_hashes import args_hash, saving_once


def _run(tmp_path: Path, store: ExecutionStore, arguments: dict[str, Any], thread: str) -> None:
    app = saving_once(tmp_path, store, arguments)
    out = app.invoke({"task": {"goal": "Save it."}}, {"configurable": {"thread_id": thread}})
    assert out["status"] == "COMPLETED", out.get("error")


def test_the_record_keeps_the_requested_and_the_normalized_hash(
    store: ExecutionStore, tmp_path: Path
) -> None:
    proposed = {"file": "./notes/a.md", "text": "hi"}
    _run(tmp_path, store, proposed, "rewritten")
    [record] = store.committed("rewritten")
    assert record.requested_hash == args_hash(proposed)
    assert record.args_hash == args_hash({"path": "notes/a.md", "text": "hi", "tag": "draft"})
    assert store.get(record.idempotency_key) == record  # read back the same

    # execgraph trace shows both: the hash the call is bound to, and the one asked for
    console = Console(record=True, width=400)
    console.print(trace_table(store.events("rewritten")))
    shown = console.export_text()
    assert f"args {record.args_hash[:12]} (requested {record.requested_hash[:12]})" in shown


def test_arguments_already_normal_keep_one_hash_twice(
    store: ExecutionStore, tmp_path: Path
) -> None:
    proposed = {"path": "notes/a.md", "text": "hi", "tag": "final"}
    _run(tmp_path, store, proposed, "as-is")
    [record] = store.committed("as-is")
    assert record.requested_hash == record.args_hash == args_hash(proposed)


def _back_to_version_3(store_url: str) -> None:
    """Make the store's layout the one before the column (what an older execgraph left)."""
    if store_url.startswith("sqlite"):
        conn = sqlite3.connect(store_url.removeprefix("sqlite:///"))
        conn.execute("ALTER TABLE executions DROP COLUMN requested_hash")
        conn.execute("PRAGMA user_version = 3")
        conn.commit()
        conn.close()
        return
    import psycopg  # the postgres extra: only where that backend runs

    with psycopg.connect(store_url) as pg:
        pg.execute("ALTER TABLE execgraph_executions DROP COLUMN requested_hash")
        pg.execute("UPDATE execgraph_schema SET version = 3")


def test_a_store_from_before_the_column_is_migrated_in_place(
    store_url: str, open_new: Opener
) -> None:
    first = open_new()
    old = reserve(first, "old").record
    first.close()
    _back_to_version_3(store_url)

    reopened = open_new()
    kept = reopened.get("old")
    assert kept is not None and kept.args_hash == old.args_hash and kept.requested_hash == ""
    new = reserve(reopened, "new", requested_hash="sha256:asked").record
    assert reopened.get("new") == new and new.requested_hash == "sha256:asked"
