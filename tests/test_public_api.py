"""The public API: ``execgraph.__all__``, pinned, and what importing it costs.

A name that appears in or disappears from ``__all__`` fails here, so a change of the public
surface is always a decision made in this file (as httpx pins its exported members).
"""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import pytest

import execgraph

PUBLIC = [
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


def test_all_is_the_pinned_public_surface_and_sorted() -> None:
    assert execgraph.__all__ == PUBLIC
    assert execgraph.__all__ == sorted(execgraph.__all__)


NEEDS_EXTRA = {"PostgresExecutionStore"}  # its module imports psycopg (the postgres extra)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.integration) if n in NEEDS_EXTRA else n
        for n in PUBLIC
        if n != "__version__"
    ],
)
def test_every_public_name_is_the_object_of_its_home_module(name: str) -> None:
    value = getattr(execgraph, name)
    home = import_module(execgraph._WHERE[name])
    assert value is (home if home.__name__.endswith(f".{name}") else getattr(home, name))
    assert name in dir(execgraph)


def test_the_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    assert execgraph.__version__ == version("execgraph")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'build_grpah'"):
        execgraph.build_grpah  # noqa: B018
    with pytest.raises(ImportError):
        exec("from execgraph import graph_builder", {})


def _loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


@pytest.mark.integration
def test_importing_execgraph_loads_no_layer_and_no_driver() -> None:
    loaded = _loaded_after("import execgraph")
    assert not {m for m in loaded if m.startswith("execgraph.")}
    assert not {m for m in loaded if m.split(".")[0] in ("langgraph", "playwright", "psycopg")}


@pytest.mark.integration
def test_building_graphs_loads_no_adapter_until_a_tool_needs_it() -> None:
    loaded = _loaded_after("from execgraph import build_graph, tool_spec, TaskSpec")
    assert "execgraph.graph.build" in loaded
    adapters = {m for m in loaded if m.startswith("execgraph.tools.adapters.")}
    assert adapters == {"execgraph.tools.adapters.base"}  # the Protocol, not an adapter
    assert not {m for m in loaded if m.split(".")[0] in ("playwright", "psycopg")}
    with_files = _loaded_after("from execgraph import FileAdapter")
    assert "execgraph.tools.adapters.files" in with_files
    assert "execgraph.tools.adapters.browser" not in with_files
    assert "playwright" not in with_files
