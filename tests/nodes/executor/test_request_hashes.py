"""A call's log keeps both hashes of its arguments: as the model proposed them, and as
normalized (what approvals and records bind to), so a reader can tell when the runtime
rewrote what was asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.request_hashes import args_hash, saving_once


def _resolved(tmp_path: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = saving_once(tmp_path, store, arguments)
    app.invoke({"task": {"goal": "Save it."}}, {"configurable": {"thread_id": "h"}})
    (event,) = [e for e in store.events("h") if e.type == "tool.resolved"]
    return dict(event.payload)


def test_normalization_changes_the_hash_and_both_are_logged(tmp_path: Path) -> None:
    proposed = {"file": "./notes/a.md", "text": "hi"}
    resolved = _resolved(tmp_path, proposed)
    assert resolved["requested_hash"] == args_hash(proposed)
    normalized = {"path": "notes/a.md", "text": "hi", "tag": "draft"}
    assert resolved["args_hash"] == args_hash(normalized)
    assert resolved["requested_hash"] != resolved["args_hash"]


def test_arguments_already_normal_hash_the_same_both_ways(tmp_path: Path) -> None:
    proposed = {"path": "notes/a.md", "text": "hi", "tag": "final"}
    resolved = _resolved(tmp_path, proposed)
    assert resolved["requested_hash"] == resolved["args_hash"] == args_hash(proposed)
