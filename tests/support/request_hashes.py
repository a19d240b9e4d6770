"""A write tool whose arguments normalization changes, a graph that calls it once, and the
argument hash computed here, apart from the runtime, for the tests of a request's two
hashes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.store import ExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

__all__ = ["args_hash", "save", "saving_once"]


@tool_spec(effect="write", path_args=["path"], aliases={"file": "path"})
def save(path: str, text: str, tag: str = "draft") -> str:
    """Save a note."""
    return "saved"


def args_hash(arguments: dict[str, Any]) -> str:
    """The hex SHA-256 of ``arguments`` as canonical JSON."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def saving_once(tmp_path: Path, store: ExecutionStore, arguments: dict[str, Any]) -> Any:
    """A react graph whose model calls ``save`` once with ``arguments``, then answers."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    call = {"name": "save", "args": arguments, "id": "c1"}
    return build_graph(
        "react",
        model=ScriptedChatModel([AIMessage("", tool_calls=[call]), AIMessage("done")]),
        tools=[save],
        workspace=tmp_path / "ws",
        home=tmp_path / "home",
        store=store,
        checkpointer=InMemorySaver(),
    )
