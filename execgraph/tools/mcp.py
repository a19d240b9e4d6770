"""Tools from MCP servers, run through the executor like any other tool.

:func:`mcp_tools` loads a server's tools with ``langchain-mcp-adapters`` (the ``mcp``
extra, imported only when MCP tools are asked for) and wraps each with
:func:`execgraph.tools.langchain.from_langchain`. Every call opens its own session (for
``stdio``, a fresh server process), as the adapters' client does by default, so a call
never shares a connection with another worker thread's event loop.

**A server is untrusted unless the application says otherwise** (the MCP specification
says clients must treat annotations as untrusted unless they come from a trusted server).
What a server sends is data, and data never widens a privilege:

- Of a tool's metadata only the MCP hints are read (``readOnlyHint``, ``destructiveHint``,
  ``idempotentHint``, ``openWorldHint``); anything else a server puts there (an
  ``effect``, a ``version``, ``timeout_s``, ``locks``, ``cost_usd`` …) is ignored. Only
  the application declares those, with ``declare``.
- The hints of an untrusted server decide nothing: its tools are ``irreversible``, as
  every undeclared tool (recorded before they run, never retried, and the default policy
  asks a person). The hints of a server named in ``trusted`` decide the effect class
  (:mod:`execgraph.tools.annotations`: read-only → ``read``, not destructive → ``write``,
  destructive or unannotated → ``irreversible``).
- ``openWorldHint: true`` (the tool reaches outside systems) is honoured from every
  server, trusted or not, and over the application's ``declare``: it can only narrow
  what the tool may do. The tool is ``open_world`` and the policy treats its calls as
  egress (an open-world write asks a person by default; an open-world read's arguments
  are checked as an irreversible call's are). ``openWorldHint: false`` never clears an
  ``open_world=True`` the application declares.
- Every MCP tool carries its server as its origin, and a graph refuses two tools of one
  name from different origins (:class:`~execgraph.nodes.toolset.DeclaredRegistry`), so a
  server cannot shadow the application's own ``pay`` by offering a ``pay`` of its own.
- A tool the runtime cannot take (a name no model provider accepts, say) is left out with
  a warning on the ``execgraph`` logger; the server's other tools are loaded.
- A reply lost on the way (the connection closed after the call was sent) is a lost
  response: a write's outcome is unknown (reconciled, never blindly retried), a read may
  be tried again; never a failure that says nothing happened.
- Each call has a deadline (``timeout_s``, 60 s unless the application declares one per
  tool); at the deadline or on a cancel the call's task is cancelled, which closes its
  session and ends a ``stdio`` server's process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Collection, Mapping
from typing import Any

from execgraph.state.diagnostics import logger
from execgraph.state.errors import ExecGraphError, ResponseLostError, TransientError
from execgraph.tools.annotations import HINTS, declared_by_hints, open_world_by_hints
from execgraph.tools.langchain import from_langchain
from execgraph.tools.spec import ToolSpec

__all__ = ["MCP_TIMEOUT_S", "amcp_tools", "mcp_tools"]

MCP_TIMEOUT_S = 60.0
"""The deadline of one MCP call when the application declares none for the tool."""

_MCP_HINT = 'pip install "execgraph[mcp]"'
_log = logger("tools.mcp")


async def amcp_tools(
    connections: Mapping[str, Mapping[str, Any]],
    *,
    declare: Mapping[str, Mapping[str, Any]] | None = None,
    trusted: Collection[str] = (),
    tool_name_prefix: bool = False,
) -> list[ToolSpec]:
    """Every tool of every server in ``connections``, as ToolSpecs.

    Args:
        connections: Server name → ``langchain-mcp-adapters`` connection, e.g.
            ``{"notes": {"transport": "stdio", "command": "python", "args": ["srv.py"]}}``.
        declare: Tool name → :func:`from_langchain` keyword arguments: the application's
            own declaration of the tool (``{"lookup": {"effect": "read"}}``), which wins
            over anything the server says.
        trusted: Names of the servers whose annotations the application trusts to decide
            a tool's effect class. Every other server's tools are ``irreversible`` unless
            ``declare`` says otherwise.
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
    overrides = declare or {}
    specs: list[ToolSpec] = []
    for server in connections:
        for tool in await client.get_tools(server_name=server):
            try:
                specs.append(
                    _as_spec(tool, server, server in trusted, dict(overrides.get(tool.name, {})))
                )
            except ExecGraphError as exc:
                _log.warning("MCP server %r: tool %r left out: %s", server, tool.name, exc)
    return specs


def _as_spec(tool: Any, server: str, trusted: bool, declared: dict[str, Any]) -> ToolSpec:
    """One server tool as a ToolSpec: the server's hints (if trusted), then the
    application's declaration; nothing else of the server's metadata."""
    hints = {k: v for k, v in (tool.metadata or {}).items() if k in HINTS}
    fields = dict(declared_by_hints(hints) or {}) if trusted else {}
    fields.update(declared)
    if open_world_by_hints(hints):  # narrows only: from any server, over any declaration
        fields["open_world"] = True
    fields.setdefault("timeout_s", MCP_TIMEOUT_S)
    # The tool as the application sees it: no server-chosen metadata or tags left to read.
    update: dict[str, Any] = {"metadata": None, "tags": None}
    if getattr(tool, "coroutine", None) is not None:
        update["coroutine"] = _lost_replies(tool.coroutine, fields.get("effect") == "read")
    bare = tool.model_copy(update=update)
    return from_langchain(bare, origin=f"mcp:{server}", **fields)


def _lost_replies(call: Any, read: bool) -> Any:
    """``call`` (an MCP tool's coroutine), with a reply lost on the way named as such.

    A connection that closes after the request went out (the server's process ended, the
    stream broke) says nothing about what the server did: for a write it is a
    :class:`~execgraph.state.errors.ResponseLostError` (the outcome is unknown, reconciled
    before anything else, never blindly retried), for a read a
    :class:`~execgraph.state.errors.TransientError`. An error the server answers with is
    the tool's own message, as before.
    """

    @functools.wraps(call)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return await call(*args, **kwargs)
        except Exception as exc:
            task = asyncio.current_task()
            if not _reply_lost(exc) or (task is not None and task.cancelling()):
                raise  # the executor stopped the call (deadline, cancel): it says so
            if read:
                raise TransientError(
                    "the MCP server's connection closed before it answered; the read may "
                    "be tried again"
                ) from None
            raise ResponseLostError(
                "the MCP server's connection closed after the call was sent and before it "
                "answered: whether it acted is unknown"
            ) from None

    return guarded


def _reply_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is a transport failure after the request was sent (no answer)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_reply_lost(e) for e in exc.exceptions)
    error = getattr(exc, "error", None)  # mcp's McpError carries the JSON-RPC error
    if type(exc).__name__ == "McpError" and getattr(error, "code", None) == _CONNECTION_CLOSED:
        return True
    return isinstance(exc, (ConnectionError, EOFError)) or type(exc).__name__ in _BROKEN


_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED
_BROKEN = {"ClosedResourceError", "BrokenResourceError", "EndOfStream"}  # anyio's streams


def mcp_tools(
    connections: Mapping[str, Mapping[str, Any]],
    *,
    declare: Mapping[str, Mapping[str, Any]] | None = None,
    trusted: Collection[str] = (),
    tool_name_prefix: bool = False,
) -> list[ToolSpec]:
    """:func:`amcp_tools` from synchronous code (also where an event loop already runs,
    as in a notebook: the tools are then listed on a thread of their own)."""
    listing = amcp_tools(
        connections, declare=declare, trusted=trusted, tool_name_prefix=tool_name_prefix
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(listing)
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, listing).result()
