"""MCP tool annotations as execgraph declarations: which effect class a server's hints name.

An MCP server annotates each tool (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``); ``langchain-mcp-adapters`` copies them into the LangChain tool's
``metadata``. They are the server's word, not a proof: :mod:`execgraph.tools.mcp` lets
them decide a tool's effect class only for a server the application trusts, as follows:

- ``readOnlyHint: true`` → ``read``;
- ``destructiveHint: false`` → ``write`` (MCP's default for ``destructiveHint`` is true);
- otherwise, destructive or unannotated → ``irreversible``, as every undeclared tool:
  recorded before it runs, never retried blindly, and the default policy asks a person;
- ``idempotentHint: true`` → ``idempotent`` (a write may then be retried like a read).

``openWorldHint: true`` (the tool reaches outside systems: the web, other people) only
ever narrows what a tool may do, so it is honoured from any server and over the
application's own declaration (:func:`open_world_by_hints`): the tool is ``open_world``,
and the policy treats its calls as egress (:mod:`execgraph.tools.policy`). An
``openWorldHint: false`` never clears an application's ``open_world=True``, and an
unannotated tool is open-world only if the application says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["HINTS", "declared_by_hints", "open_world_by_hints"]

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The MCP tool annotations execgraph reads; the effect comes from the first three, the
open world (egress) from the last."""

_EFFECT_HINTS = HINTS[:3]


def declared_by_hints(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    """The effect (and idempotence) MCP annotations declare; None without any hint.

    ``langchain-mcp-adapters`` copies a tool's annotations into its ``metadata``.
    """
    if not any(metadata.get(h) is not None for h in _EFFECT_HINTS):
        return None
    if metadata.get("readOnlyHint") is True:
        return {"effect": "read"}
    effect = "write" if metadata.get("destructiveHint") is False else "irreversible"
    return {"effect": effect, "idempotent": metadata.get("idempotentHint") is True}


def open_world_by_hints(metadata: Mapping[str, Any]) -> bool:
    """Whether the MCP annotations say the tool reaches outside systems (only an explicit
    ``openWorldHint: true``: a narrowing, so taken from any server)."""
    return metadata.get("openWorldHint") is True
