"""The research-assistant demo: ``make demo``, ``execgraph run`` with no tools, Studio.

Everything the demo is lives here and nowhere in the core: the corpus and its search and
read tools (``corpus``), the publish tool, the citation check and the demo task
(``research``), the deterministic offline policy that plays the model (``policy``), and
the graphs over them (``build``). The core (``execgraph.graph`` and below) never imports
this package.
"""

from execgraph.demo.build import (
    DEMO_STAGES,
    build_demo_graph,
    demo_model,
    demo_task,
    demo_tools,
)
from execgraph.demo.corpus import CorpusAdapter
from execgraph.demo.policy import OfflinePolicyModel
from execgraph.demo.research import RESEARCH_CHECKS

__all__ = [
    "DEMO_STAGES",
    "RESEARCH_CHECKS",
    "CorpusAdapter",
    "OfflinePolicyModel",
    "build_demo_graph",
    "demo_model",
    "demo_task",
    "demo_tools",
]
