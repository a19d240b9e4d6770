"""Fixtures shared by the store suites: an empty store of every backend, and more openers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.state.store import ExecutionStore, open_store
from tests.state.store.store_helpers import Opener


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL naming an empty store of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'execgraph.db'}"
    return str(request.getfixturevalue("postgres_database"))


@pytest.fixture
def open_new(store_url: str) -> Iterator[Opener]:
    """Opens more store instances on the same backing storage (other workers)."""
    opened: list[ExecutionStore] = []

    def _open() -> ExecutionStore:
        store = open_store(store_url)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_new: Opener) -> ExecutionStore:
    return open_new()
