"""Compiled LangGraph graphs (wiring only) and the public entry points.

``build_graph(arch, model=..., tools=...)`` compiles one of the four architectures
(``workflow``, ``react``, ``plan_execute``, ``hybrid``) over the shared state and the one
executor pipeline; ``build_executor`` compiles the executor pipeline alone.
"""

from execgraph.graph.build import ARCHITECTURES, Architecture, build_graph
from execgraph.graph.executor import build_executor
from execgraph.graph.hybrid import build_hybrid
from execgraph.graph.plan_execute import build_plan_execute
from execgraph.graph.react import build_react
from execgraph.graph.workflow import Stage, build_workflow

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "Stage",
    "build_executor",
    "build_graph",
    "build_hybrid",
    "build_plan_execute",
    "build_react",
    "build_workflow",
]
