"""execgraph: a LangGraph runtime that turns a model's tool calls into controlled actions.

A model's tool call is only a candidate. ``build_graph`` compiles one of four ways of
controlling an agent — ``"workflow"``, ``"react"``, ``"plan_execute"``, ``"hybrid"`` — over
one shared state, and every real action in all four passes through one executor pipeline
(resolve, normalize, validate, authorize or ask a person, reserve, lock, invoke, observe,
commit)::

    from execgraph import build_graph, tool_spec

    @tool_spec(effect="write", locks=["file:{path}"], path_args=["path"])
    def write_note(path: str, text: str) -> str: ...

    app = build_graph("react", model="openai:gpt-4o-mini", tools=[write_note])

The names in ``__all__`` are the public API. The layers below them (``execgraph.graph``,
``execgraph.nodes``, ``execgraph.tools``, ``execgraph.state``) and the applications built on
them (``execgraph.cli``, ``execgraph.demo``, ``execgraph.replaying``, ``execgraph.studio``) are
importable but internal: their names may change between releases.

Every name loads on first use (PEP 562), so ``import execgraph`` costs milliseconds and an
adapter's driver (Playwright, psycopg) loads only when that adapter is used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from execgraph.engines.replay_api import replay
    from execgraph.graph.build import ARCHITECTURES, Architecture, build_graph
    from execgraph.graph.executor import build_executor
    from execgraph.middleware import ExecutorMiddleware
    from execgraph.nodes.cancel import request_call_cancel, request_cancel
    from execgraph.nodes.executor import reconcile
    from execgraph.state import errors
    from execgraph.state.contracts import (
        ApprovalDecision,
        ApprovalRequest,
        Evidence,
        RunStatus,
        SuccessCheck,
        TaskSpec,
        ToolExecutionRequest,
        ToolResult,
    )
    from execgraph.state.errors import ExecGraphError
    from execgraph.state.store import open_store
    from execgraph.state.store.base import ExecutionStore
    from execgraph.state.store.postgres import PostgresExecutionStore
    from execgraph.state.store.sqlite import SqliteExecutionStore
    from execgraph.testing.scripted import ScriptedChatModel
    from execgraph.tools.adapters.base import Adapter
    from execgraph.tools.adapters.browser import BrowserAdapter
    from execgraph.tools.adapters.database import DatabaseAdapter
    from execgraph.tools.adapters.files import FileAdapter
    from execgraph.tools.adapters.http import HttpAdapter
    from execgraph.tools.adapters.process import ProcessAdapter
    from execgraph.tools.invocation import AdapterOutput, InvokeContext
    from execgraph.tools.langchain import from_langchain
    from execgraph.tools.mcp import amcp_tools, mcp_tools
    from execgraph.tools.policy import PolicyEngine, PolicyRule
    from execgraph.tools.spec import ToolSpec, tool_spec

__all__ = [
    "ARCHITECTURES",
    "Adapter",
    "AdapterOutput",
    "ApprovalDecision",
    "ApprovalRequest",
    "Architecture",
    "BrowserAdapter",
    "DatabaseAdapter",
    "Evidence",
    "ExecGraphError",
    "ExecutionStore",
    "ExecutorMiddleware",
    "FileAdapter",
    "HttpAdapter",
    "InvokeContext",
    "PolicyEngine",
    "PolicyRule",
    "PostgresExecutionStore",
    "ProcessAdapter",
    "RunStatus",
    "ScriptedChatModel",
    "SqliteExecutionStore",
    "SuccessCheck",
    "TaskSpec",
    "ToolExecutionRequest",
    "ToolResult",
    "ToolSpec",
    "__version__",
    "amcp_tools",
    "build_executor",
    "build_graph",
    "errors",
    "from_langchain",
    "mcp_tools",
    "open_store",
    "reconcile",
    "replay",
    "request_call_cancel",
    "request_cancel",
    "tool_spec",
]

#: Where each public name lives (the module is imported when the name is first used).
_WHERE: dict[str, str] = {
    "ARCHITECTURES": "execgraph.graph.build",
    "Adapter": "execgraph.tools.adapters.base",
    "AdapterOutput": "execgraph.tools.invocation",
    "ApprovalDecision": "execgraph.state.contracts",
    "ApprovalRequest": "execgraph.state.contracts",
    "Architecture": "execgraph.graph.build",
    "BrowserAdapter": "execgraph.tools.adapters.browser",
    "DatabaseAdapter": "execgraph.tools.adapters.database",
    "Evidence": "execgraph.state.contracts",
    "ExecGraphError": "execgraph.state.errors",
    "ExecutionStore": "execgraph.state.store.base",
    "ExecutorMiddleware": "execgraph.middleware",
    "FileAdapter": "execgraph.tools.adapters.files",
    "HttpAdapter": "execgraph.tools.adapters.http",
    "InvokeContext": "execgraph.tools.invocation",
    "PolicyEngine": "execgraph.tools.policy",
    "PolicyRule": "execgraph.tools.policy",
    "PostgresExecutionStore": "execgraph.state.store.postgres",
    "ProcessAdapter": "execgraph.tools.adapters.process",
    "RunStatus": "execgraph.state.contracts",
    "ScriptedChatModel": "execgraph.testing.scripted",
    "SqliteExecutionStore": "execgraph.state.store.sqlite",
    "SuccessCheck": "execgraph.state.contracts",
    "TaskSpec": "execgraph.state.contracts",
    "ToolExecutionRequest": "execgraph.state.contracts",
    "ToolResult": "execgraph.state.contracts",
    "ToolSpec": "execgraph.tools.spec",
    "build_executor": "execgraph.graph.executor",
    "build_graph": "execgraph.graph.build",
    "errors": "execgraph.state.errors",
    "amcp_tools": "execgraph.tools.mcp",
    "from_langchain": "execgraph.tools.langchain",
    "mcp_tools": "execgraph.tools.mcp",
    "open_store": "execgraph.state.store",
    "reconcile": "execgraph.nodes.executor",
    "replay": "execgraph.engines.replay_api",
    "request_call_cancel": "execgraph.nodes.cancel",
    "request_cancel": "execgraph.nodes.cancel",
    "tool_spec": "execgraph.tools.spec",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata, once, when asked
        from importlib.metadata import version

        globals()[name] = version("execgraph")
        return globals()[name]
    if name not in _WHERE:
        raise AttributeError(f"module 'execgraph' has no attribute {name!r}")
    module = import_module(_WHERE[name])
    value = module if module.__name__.endswith(f".{name}") else getattr(module, name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
