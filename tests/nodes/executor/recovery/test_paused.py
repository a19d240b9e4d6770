"""A tool that pauses the run leaves its record marked and its locks free; only that
attempt counts as paused, so a crash during the resumed attempt is reconciled as a crash."""

from __future__ import annotations

from pathlib import Path

from execgraph.nodes.executor.recovery.paused import mark_paused, resumes_pause
from execgraph.nodes.executor.stages.lock import Locked
from execgraph.state.store.sqlite import SqliteExecutionStore


def _store(tmp_path: Path) -> SqliteExecutionStore:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    store.reserve(
        "k1", run_id="r", call_id="c", tool="t", version="1", args_hash="h", attempt_id="a1"
    )
    return store


def test_a_paused_attempt_is_marked_and_holds_no_lock(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.acquire_locks(["file:a"], "r:c", lease_s=300, timeout_s=1)
    record = store.get("k1")
    assert record is not None and not resumes_pause(record)  # a crash leaves no mark
    mark_paused(store, "k1", "a1", Locked(keys=("file:a",), owner="r:c", queued_ms=0))
    record = store.get("k1")
    assert record is not None and record.state == "started" and resumes_pause(record)
    store.acquire_locks(["file:a"], "someone-else", lease_s=5, timeout_s=0.5)  # free
    # The resumed attempt replaces the mark: if it crashes, it is a crash.
    store.restart("k1", "a2")
    record = store.get("k1")
    assert record is not None and not resumes_pause(record)


def test_a_store_that_cannot_take_the_mark_leaves_the_record_as_a_crash_would(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    store.commit("k1", {"outcome": "succeeded"})  # a committed record cannot restart
    mark_paused(store, "k1", "a1", Locked(keys=(), owner="r:c", queued_ms=0))  # no raise
    record = store.get("k1")
    assert record is not None and record.state == "committed" and not resumes_pause(record)
