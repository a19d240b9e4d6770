"""The graphs ``langgraph.json`` exposes to LangGraph Studio and ``langgraph dev``.

Five module-level compiled graphs: the four architectures and the executor pipeline alone.
By default they run the research demo, driven by the offline policy so Studio works with
no API key. Two environment variables (set them in the ``env`` of your own
``langgraph.json``, or in ``.env``) serve your own tools instead:

* ``EXECGRAPH_TOOLS=package.module:attr`` — a list of tools (ToolSpecs, LangChain tools,
  adapters) importable from the server's working directory or ``PYTHONPATH``;
* ``EXECGRAPH_MODEL=provider:model`` — the chat model (``init_chat_model``; e.g.
  ``openai:gpt-4o-mini``, configured by the provider's own variables such as
  ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``). Required with ``EXECGRAPH_TOOLS``; without
  it, it replaces the demo's offline policy.

A graph with options these cannot carry (a policy, checks, stages, a model object) is a
module of your own that calls ``build_graph(..., checkpointer=False)`` at module level,
named in your ``langgraph.json`` as ``"./agent.py:graph"``.

They are compiled without a checkpointer — the LangGraph server supplies persistence
(threads, checkpoints, interrupts) — while the execution store (execution records,
idempotency keys, locks, events, artifacts) stays the embedded SQLite one under
``$EXECGRAPH_HOME`` (or ``.execgraph`` in the server's working directory), shared by all
five graphs, with the workspace in its ``workspace/`` folder.

Why module-level graphs and not factories: the server calls a factory on its event loop for
every run and state read, where building a graph (directories, SQLite, the approval key)
would be blocking I/O that ``langgraph dev`` rejects; module-level graphs are built once,
when the server imports this module in a worker thread at startup. Reference the module as
``execgraph.studio:<name>`` (module syntax), so it is imported once, not once per graph.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from execgraph.demo.build import build_demo_graph, demo_tools
from execgraph.graph.build import build_graph
from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.errors import UsageError
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.policy import PolicyEngine
from execgraph.tools.refs import import_ref, tool_list
from execgraph.tools.registry import ToolLike, ToolRegistry

__all__ = [
    "MODEL_ENV",
    "TOOLS_ENV",
    "executor",
    "hybrid",
    "load_tools",
    "plan_execute",
    "react",
    "workflow",
]

TOOLS_ENV = "EXECGRAPH_TOOLS"
MODEL_ENV = "EXECGRAPH_MODEL"


def load_tools(ref: str) -> list[ToolLike]:
    """The tools ``ref`` (``module:attr``) names, as a list (one tool, or a list of them).

    Raises:
        UsageError: a malformed reference, a module or attribute that is not there, or
            something that is not tools.
    """
    return tool_list(import_ref(ref, source=TOOLS_ENV), source=TOOLS_ENV, ref=ref)


def _graphs() -> tuple[Callable[[str], Any], list[ToolLike]]:
    """How to build one architecture, and the executor graph's tools, from the env."""
    ref = os.environ.get(TOOLS_ENV, "").strip()
    model = os.environ.get(MODEL_ENV, "").strip()
    if not ref:
        return (
            lambda arch: build_demo_graph(
                arch,
                model=model or "offline",
                home=_home,
                workspace=_workspace,
                store=_store,
                checkpointer=False,
            ),
            demo_tools(_workspace),
        )
    tools = load_tools(ref)
    if not model:
        raise UsageError(f"{TOOLS_ENV} is set: set {MODEL_ENV} too, e.g. 'openai:gpt-4o-mini'")
    return (
        lambda arch: build_graph(
            arch,
            model=model,
            tools=tools,
            home=_home,
            workspace=_workspace,
            store=_store,
            checkpointer=False,
        ),
        tools,
    )


_home = Home.at().root
_workspace = Home(_home).workspace
_workspace.mkdir(parents=True, exist_ok=True)
_store = SqliteExecutionStore(Home(_home).exec_db)
_build, _tools = _graphs()

workflow = _build("workflow")
react = _build("react")
plan_execute = _build("plan_execute")
hybrid = _build("hybrid")
executor = build_executor(
    ExecutorDeps(
        registry=ToolRegistry(_tools),
        policy=PolicyEngine(),
        store=_store,
        approval_secret=Home(_home).secret(),
    ),
    checkpointer=None,
    name="executor",
)
