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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["HINTS", "declared_by_hints"]

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The MCP tool annotations execgraph reads; the effect comes from the first three."""

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
