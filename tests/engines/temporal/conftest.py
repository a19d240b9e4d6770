"""The tests' workers and clients share one approval key, as an operator's would."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def shared_approval_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers accept only answers signed with their key; the tests' clients hold it."""
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", "tests-shared-approval-key")
