"""The graphs ``langgraph.json`` exposes to LangGraph Studio and ``langgraph dev``.

Five module-level compiled graphs: the four architectures over the research demo, driven by
the offline policy so Studio works with no API key, and the executor pipeline alone over
the demo tools. They are compiled without a checkpointer — the LangGraph server supplies
persistence (threads, checkpoints, interrupts) — while the execution store (execution
records, idempotency keys, locks, events, artifacts) stays the embedded SQLite one under
``$EXECGRAPH_HOME`` (or ``.execgraph`` in the server's working directory), shared by all
five graphs, with the demo workspace in its ``workspace/`` folder.

Why module-level graphs and not factories: the server calls a factory on its event loop for
every run and state read, where building a graph (directories, SQLite, the approval key)
would be blocking I/O that ``langgraph dev`` rejects; module-level graphs are built once,
when the server imports this module in a worker thread at startup. Reference the module as
``execgraph.studio:<name>`` (module syntax), so it is imported once, not once per graph.
"""

from __future__ import annotations

from typing import Any

from execgraph.demo.build import build_demo_graph, demo_tools
from execgraph.graph.build import default_home, home_secret
from execgraph.graph.executor import build_executor
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.policy import PolicyEngine
from execgraph.tools.registry import ToolRegistry

__all__ = ["executor", "hybrid", "plan_execute", "react", "workflow"]

_home = default_home()
_workspace = _home / "workspace"
_workspace.mkdir(parents=True, exist_ok=True)
_store = SqliteExecutionStore(_home / "exec.db")


def _demo(arch: str) -> Any:
    return build_demo_graph(
        arch,
        model="offline",
        home=_home,
        workspace=_workspace,
        store=_store,
        checkpointer=False,
    )


workflow = _demo("workflow")
react = _demo("react")
plan_execute = _demo("plan_execute")
hybrid = _demo("hybrid")
executor = build_executor(
    ExecutorDeps(
        registry=ToolRegistry(demo_tools(_workspace)),
        policy=PolicyEngine(),
        store=_store,
        approval_secret=home_secret(_home),
    ),
    checkpointer=None,
    name="executor",
)
