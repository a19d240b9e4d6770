"""Tools from MCP servers, run through the executor like any other tool.

:func:`mcp_tools` loads a server's tools with ``langchain-mcp-adapters`` (the ``mcp``
extra, imported only when MCP tools are asked for) and wraps each with
:func:`execgraph.tools.langchain.from_langchain`. Every call opens its own session (for
``stdio``, a fresh server process), as the adapters' client does by default, so a call
never shares a connection with another worker thread's event loop.

A tool's effect class comes from its MCP annotations, the server's own declaration
(:mod:`execgraph.tools.annotations`: read-only → ``read``, not destructive → ``write``,
destructive or unannotated → ``irreversible``). The hints are the server's word, not a
proof; ``declare`` overrides them per tool, and a policy rule can always tighten them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping
from typing import Any

from execgraph.tools.langchain import from_langchain
from execgraph.tools.spec import ToolSpec

__all__ = ["amcp_tools", "mcp_tools"]

_MCP_HINT = 'pip install "execgraph[mcp]"'


async def amcp_tools(
    connections: Mapping[str, Mapping[str, Any]],
    *,
    declare: Mapping[str, Mapping[str, Any]] | None = None,
    tool_name_prefix: bool = False,
) -> list[ToolSpec]:
    """Every tool of every server in ``connections``, as ToolSpecs.

    Args:
        connections: Server name → ``langchain-mcp-adapters`` connection, e.g.
            ``{"notes": {"transport": "stdio", "command": "python", "args": ["srv.py"]}}``.
        declare: Tool name → :func:`from_langchain` keyword arguments that override what
            the server's annotations say (``{"lookup": {"effect": "read"}}``).
        tool_name_prefix: Prefix each tool's name with its server's (``notes_lookup``).

    Raises:
        ImportError: the ``mcp`` extra is not installed (the message says how to).
    """
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
    except ImportError:
        raise ImportError(f"MCP tools need langchain-mcp-adapters: {_MCP_HINT}") from None
    client = MultiServerMCPClient(
        {name: dict(c) for name, c in connections.items()},  # type: ignore[misc,unused-ignore]
        tool_name_prefix=tool_name_prefix,
    )
    tools = await client.get_tools()
    overrides = declare or {}
    return [from_langchain(t, **dict(overrides.get(t.name, {}))) for t in tools]


def mcp_tools(
    connections: Mapping[str, Mapping[str, Any]],
    *,
    declare: Mapping[str, Mapping[str, Any]] | None = None,
    tool_name_prefix: bool = False,
) -> list[ToolSpec]:
    """:func:`amcp_tools` from synchronous code (also where an event loop already runs,
    as in a notebook: the tools are then listed on a thread of their own)."""
    listing = amcp_tools(connections, declare=declare, tool_name_prefix=tool_name_prefix)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(listing)
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, listing).result()
