"""Snapshot comparison for compiled-graph drawings (update with EXECGRAPH_UPDATE_SNAPSHOTS=1).

A mermaid drawing opens with a YAML front matter that LangChain writes with ``yaml.dump``,
whose quoting any imported library may change process-wide (AgentDojo registers a quoting
representer for ``str``). The front matter is compared as the YAML it is, the graph as
text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

SNAPSHOTS = Path(__file__).resolve().parents[1] / "graph" / "snapshots"


def _parts(text: str) -> tuple[Any, str]:
    if text.startswith("---\n"):
        head, _, body = text[4:].partition("\n---\n")
        return yaml.safe_load(head), body
    return None, text


def assert_snapshot(name: str, text: str) -> None:
    """Fail unless ``text`` equals the stored snapshot ``name`` (written only on request)."""
    path = SNAPSHOTS / name
    if os.environ.get("EXECGRAPH_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"missing snapshot {path}; run with EXECGRAPH_UPDATE_SNAPSHOTS=1"
    assert _parts(text) == _parts(path.read_text()), (
        f"{name} changed; review and update the snapshot"
    )
