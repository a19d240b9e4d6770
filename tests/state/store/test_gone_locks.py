"""A gone worker's locks are freed on take-over, whoever took its call over in between.

A call's worker A dies holding the call's locks; worker B takes the call over and dies
before its commit; worker C's commit frees only B's locks, so A's would stay held until
their lease ran out (the kill harness on Temporal found one). ``release_gone_locks``
frees every lock on the keys whose owner is provably gone, and no live owner's.
"""

from __future__ import annotations

import subprocess

import pytest

from execgraph.state.errors import LockTimeout
from execgraph.state.store import ExecutionStore
from execgraph.state.store.worker import worker_id

OTHER = "elsewhere/1/1/feedbeef|run-1:c1"  # a worker on another host: never provably gone


def _dead_owner(key: str) -> str:
    """A lock owner on this host whose process has exited."""
    child = subprocess.Popen(["true"])
    child.wait()
    host = worker_id().split("/")[0]
    return f"{host}/{child.pid}/1/deadbeef|{key}"


def _held(store: ExecutionStore, key: str) -> bool:
    try:
        store.acquire_locks([key], "probe/9/9/probe|x", lease_s=60.0, timeout_s=0.0)
    except LockTimeout:
        return True
    store.release_locks([key], "probe/9/9/probe|x")
    return False


@pytest.mark.integration
def test_only_the_gone_owners_locks_are_released(store: ExecutionStore) -> None:
    mine = f"{worker_id()}|run-1:c1"
    store.acquire_locks(["ledger"], _dead_owner("run-1:c1"), lease_s=600.0, timeout_s=1.0)
    store.acquire_locks(["transfers"], OTHER, lease_s=600.0, timeout_s=1.0)
    store.acquire_locks(["mine"], mine, lease_s=600.0, timeout_s=1.0)
    assert _held(store, "ledger")  # before: a dead owner's lock blocks for its lease
    store.release_gone_locks(["ledger", "transfers", "mine", "never-locked"])
    assert not _held(store, "ledger")
    assert _held(store, "transfers")  # another host's owner is never provably gone
    assert _held(store, "mine")  # nor is this process
