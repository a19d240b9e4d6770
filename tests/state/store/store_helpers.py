"""Helpers shared by the store suites."""

from __future__ import annotations

from collections.abc import Callable

from execgraph.state.store import ExecutionStore, Reservation

Opener = Callable[[], ExecutionStore]


def reserve(store: ExecutionStore, key: str = "k1", **overrides: str) -> Reservation:
    """Reserve ``key`` with placeholder fields (``overrides`` replace any of them)."""
    fields = {
        "run_id": "run-1",
        "call_id": "call-1",
        "tool": "write_note",
        "version": "1.0.0",
        "args_hash": "sha256:abc",
        "attempt_id": "att-1",
    }
    fields.update(overrides)
    return store.reserve(key, **fields)
