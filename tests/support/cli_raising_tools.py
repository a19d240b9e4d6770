"""A toolkit for CLI tests whose search raises (``--tools tests.support.cli_raising_tools:
raising_demo``): what a developer sees of a tool's exception in ``execgraph trace``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.demo.corpus import CorpusAdapter
from execgraph.demo.research import publish_tool
from execgraph.tools import tool_spec
from execgraph.tools.adapters.files import FileAdapter

BROKEN = "corpus index /srv/idx-9 is corrupt"


@tool_spec(name="search_corpus", effect="read", version="1.0.0")
def search_corpus(query: str, limit: int = 5) -> dict[str, Any]:
    """Search the corpus (this one's index is broken: it raises)."""
    raise RuntimeError(BROKEN)


def raising_demo(workspace: Path) -> list[Any]:
    """The demo toolkit with a search that raises."""
    reads = [t for t in CorpusAdapter().tools() if t.name != "search_corpus"]
    return [search_corpus, *reads, FileAdapter(workspace), publish_tool()]
