"""The research-assistant demo: the main job of ``make demo`` and ``execgraph run``.

Wiring only: the shipped corpus (search and read), the workspace files (the draft), an
irreversible publish behind approval, the citation check, and the offline policy as the
default model — so the whole thing runs with no network and no API key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from execgraph.demo.corpus import CorpusAdapter
from execgraph.demo.policy import OfflinePolicyModel
from execgraph.demo.research import RESEARCH_CHECKS, publish_tool, research_task
from execgraph.graph.build import build_graph
from execgraph.graph.workflow import Stage
from execgraph.state.home import Home
from execgraph.tools.adapters.files import FileAdapter

__all__ = ["DEMO_STAGES", "build_demo_graph", "demo_model", "demo_task", "demo_tools"]

DEMO_STAGES = [
    Stage("search", ("search_corpus",), "Search the corpus for sources on the question."),
    Stage("read", ("read_document",), "Read the most relevant documents."),
    Stage("draft", ("write_file",), "Write report.md comparing the approaches, citing [doc-id]."),
    Stage("publish", ("publish_report",), "Publish report.md if it is ready."),
]


def demo_task() -> dict[str, Any]:
    """The demo TaskSpec: compare RAG and long context, write a cited report, publish it."""
    return research_task()


def demo_tools(workspace: Path) -> list[Any]:
    """Corpus search and read, workspace files, and the publish tool."""
    return [CorpusAdapter(), FileAdapter(workspace), publish_tool()]


def demo_model(model: BaseChatModel | str = "offline") -> BaseChatModel | str:
    """``model`` as ``build_graph`` takes it; ``"offline"`` is the demo's own policy."""
    if isinstance(model, str) and model.strip().lower() == "offline":
        return OfflinePolicyModel()
    return model


def build_demo_graph(
    arch: str = "react",
    *,
    model: Any = "offline",
    home: str | Path | None = None,
    **kwargs: Any,
) -> Any:
    """Compile ``arch`` over the demo tools, checks and stages (embedded defaults)."""
    base = Home.at(home).root
    workspace = Path(kwargs.pop("workspace", Home(base).workspace))
    workspace.mkdir(parents=True, exist_ok=True)
    return build_graph(
        arch,
        model=demo_model(model),
        tools=demo_tools(workspace),
        checks=RESEARCH_CHECKS,
        stages=DEMO_STAGES,
        workspace=workspace,
        home=base,
        **kwargs,
    )
