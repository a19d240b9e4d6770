"""The demo as a registered tool set: what a run named ``tools="demo"`` is built from.

The demo registers itself in an engine's :class:`~execgraph.engines.graphs.Graphs` like
any other tool set: its corpus, files and publish tool, its citation check and its
workflow stages, under the name ``"demo"``; and the model name ``"offline"``, its
deterministic scripted policy (no network, no API key).
"""

from __future__ import annotations

from execgraph.demo.build import DEMO_STAGES, demo_tools
from execgraph.demo.policy import OfflinePolicyModel
from execgraph.demo.research import RESEARCH_CHECKS
from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import DEFAULT_TOOLS

__all__ = ["OFFLINE", "register_demo"]

OFFLINE = "offline"
"""The model name of the demo's scripted policy."""


def register_demo(graphs: Graphs) -> Graphs:
    """Register the demo's tool set (``"demo"``) and model (``"offline"``) in ``graphs``."""
    graphs.add_tools(DEFAULT_TOOLS, demo_tools, checks=RESEARCH_CHECKS, stages=DEMO_STAGES)
    graphs.add_model(OFFLINE, OfflinePolicyModel)
    return graphs
