"""Tools for CLI tests (``execgraph run --tools tests.support.cli_slow_tools:TOOLS``).

``search_corpus`` here shadows the demo's search: the offline policy calls it first, and
it blocks until the run is cancelled (the executor polls the store for a cancel request
and sets ``ctx.cancel``), so a test can cancel a *running* run from another process.
A safety limit keeps a broken cancel path from hanging the test suite forever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.demo.corpus import CorpusAdapter
from execgraph.demo.research import publish_tool
from execgraph.state.errors import ResponseLostError, ToolCancelled
from execgraph.tools import InvokeContext, tool_spec
from execgraph.tools.adapters.files import FileAdapter

SAFETY_LIMIT_S = 120.0


@tool_spec(name="search_corpus", effect="read", version="1.0.0", timeout_s=SAFETY_LIMIT_S + 60)
def search_corpus(ctx: InvokeContext, query: str, limit: int = 5) -> dict[str, Any]:
    """Search the corpus (slowly: this search waits until the run is cancelled)."""
    ctx.emit("progress", {"message": "slow search started"})
    if ctx.cancel.wait(SAFETY_LIMIT_S):
        raise ToolCancelled("the slow search was cancelled")
    return {"hits": []}


def slow_demo(workspace: Path) -> list[Any]:
    """The demo toolkit with the slow search in place of the corpus search."""
    reads = [t for t in CorpusAdapter().tools() if t.name != "search_corpus"]
    return [search_corpus, *reads, FileAdapter(workspace), publish_tool()]


TOOLS = [search_corpus]
"""Only the slow search (a list value for ``--tools``)."""


def broken(workspace: Path) -> list[Any]:
    """A factory that fails: the CLI reports an internal error (exit 1), no traceback."""
    raise RuntimeError("the tool factory is broken")


@tool_spec(name="write_file", effect="write", version="1.0.0")
def lossy_write(path: str, content: str) -> str:
    """Write a file; the response is lost after the write, and no probe can tell."""
    raise ResponseLostError("the connection dropped after the write")


def lossy_demo(workspace: Path) -> list[Any]:
    """The demo toolkit whose file write loses its response (its outcome is unknown)."""
    return [*CorpusAdapter().tools(), lossy_write, publish_tool()]
