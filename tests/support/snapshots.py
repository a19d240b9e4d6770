"""Snapshot comparison for compiled-graph drawings (update with EXECGRAPH_UPDATE_SNAPSHOTS=1)."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parents[1] / "graph" / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    """Fail unless ``text`` equals the stored snapshot ``name`` (written only on request)."""
    path = SNAPSHOTS / name
    if os.environ.get("EXECGRAPH_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"missing snapshot {path}; run with EXECGRAPH_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(), f"{name} changed; review and update the snapshot"
