"""Stage 6 alone: lock keys are scoped and sorted, taken all or none."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.nodes.executor.stages.lock import acquire, lock_keys
from execgraph.state.contracts import Workspace
from execgraph.state.errors import DomainViolation, LockTimeout
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.nodes.executor.stages.stage_helpers import save


def test_locks_are_scoped_sorted_and_exclusive(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "s.db")
    two = save.with_(locks=("file:{path}", "dir:{mode}"))
    ws = Workspace(id="run-1", root="/ws")
    keys = lock_keys(two, {"path": "a.txt", "mode": "w"}, ws)
    assert keys == ("/ws/dir:w", "/ws/file:a.txt")  # the workspace's, not the run's
    with pytest.raises(DomainViolation):
        lock_keys(two, {"path": "a.txt"}, ws)
    held = acquire(store, keys, "owner-1", lease_s=60, timeout_s=1)
    with pytest.raises(LockTimeout):
        acquire(store, keys[1:], "owner-2", lease_s=60, timeout_s=0.2)
    store.release_locks(held.keys, "owner-1")
    assert acquire(store, keys[1:], "owner-2", lease_s=60, timeout_s=1).keys == keys[1:]
