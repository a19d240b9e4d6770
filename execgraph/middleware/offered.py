"""ToolSpecs offered to a ``create_agent`` agent, as the LangChain tools the model sees.

``create_agent`` offers its model ``BaseTool``s. A tool written for execgraph (a
``tool_spec`` function, an adapter's tools, the tools ``mcp_tools`` lists) is given to
the middleware (``tools=``), and
the middleware offers it to the agent as a stand-in: the spec's name, description and
argument model, so the model sees exactly the schema the executor validates against.
The stand-in never runs: the middleware runs every call through the executor, which runs
the spec. A LangChain tool wrapped with ``from_langchain`` is only a declaration for the
agent's own tool of that name, not offered again.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from execgraph.state.errors import UsageError
from execgraph.tools.langchain import LangChainRunner
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = ["offered_tools"]


def _never(**_: Any) -> str:
    raise UsageError(
        "this tool runs through ExecutorMiddleware's executor: list ExecutorMiddleware in "
        "the agent's middleware, last"
    )


def _stand_in(spec: ToolSpec) -> BaseTool:
    return StructuredTool.from_function(
        func=_never,
        name=spec.name,
        description=spec.description or spec.name,
        args_schema=spec.input_model,
        infer_schema=False,
    )


def offered_tools(registry: ToolRegistry) -> list[BaseTool]:
    """Stand-ins for the registry's tools that are not LangChain tools of the agent."""
    return [_stand_in(s) for s in registry.latest() if _offered(s)]


def _offered(spec: ToolSpec) -> bool:
    """An execgraph tool, or a server's (``mcp:`` origin); not a declaration of one of the
    agent's own LangChain tools."""
    return not isinstance(spec.run, LangChainRunner) or spec.origin.startswith("mcp:")
