"""A run's graph from names alone: an architecture, a model string, a ``--tools`` reference.

The CLI writes these names down when a run starts and a Temporal worker receives them in
the run's spec; both rebuild the same graph from them here. No tools reference means the
demo (its corpus, files, publish tool, checks and stages); a reference means the user's
own tools with nothing of the demo. ``"offline"`` is the demo's scripted policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from execgraph.demo.build import build_demo_graph, demo_model
from execgraph.graph.build import build_graph
from execgraph.state.compiled import RunGraph
from execgraph.tools.tool_source import load_tools

__all__ = ["named_graph"]


def named_graph(
    arch: str,
    *,
    model: BaseChatModel | str,
    tools: str | None,
    workspace: Path,
    **kwargs: Any,
) -> RunGraph:
    """Compile ``arch`` over the demo (``tools=None``) or the tools ``tools`` names.

    ``kwargs`` go to :func:`~execgraph.graph.build.build_graph` (``home``, ``store``,
    ``checkpointer``, ``database``, ...).
    """
    chosen = demo_model(model)
    if tools is None:
        graph: RunGraph = build_demo_graph(arch, model=chosen, workspace=workspace, **kwargs)
        return graph
    workspace.mkdir(parents=True, exist_ok=True)
    own = load_tools(tools, workspace)
    return build_graph(arch, model=chosen, tools=own, workspace=workspace, **kwargs)
