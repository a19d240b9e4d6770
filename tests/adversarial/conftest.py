"""Fixtures shared by the adversarial races: two real worker processes on one store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.workers import Worker, start_pair


# Both start two worker processes: integration on either backend.
@pytest.fixture(
    params=[pytest.param(b, marks=pytest.mark.integration) for b in ("sqlite", "postgres")]
)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Worker, Worker, str]]:
    """Two workers on one store and checkpointer of each backend, and the store's URL."""
    if request.param == "sqlite":
        store, checkpoints = str(tmp_path / "exec.db"), str(tmp_path / "checkpoints.db")
    else:
        store = checkpoints = str(request.getfixturevalue("postgres_database"))
    a, b = start_pair(store, tmp_path / "w", checkpoints)
    yield a, b, store
    a.close()
    b.close()
