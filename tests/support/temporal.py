"""A real Temporal server for the tests: ``temporal server start-dev`` on a free port of
127.0.0.1 (:func:`execgraph.engines.temporal.dev_server.dev_server`), shared by the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from execgraph.engines.temporal.dev_server import dev_server

__all__ = ["temporal_address"]


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """``host:port`` of a Temporal dev server shared by the session's tests."""
    with dev_server() as address:
        yield address
