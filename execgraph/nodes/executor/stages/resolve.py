"""Stage 1 — resolve: the exact tool version a request runs (or a resolution error)."""

from __future__ import annotations

from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import SchemaViolation
from execgraph.state.surrogates import has_surrogate
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = ["resolve"]


def resolve(request: ToolExecutionRequest, registry: ToolRegistry) -> ToolSpec:
    """Look the tool up by name and requested version; nothing has happened if this fails.

    Raises:
        ResolutionError: unknown, disabled, or no compatible version.
        SchemaViolation: the name holds a lone surrogate (no tool could have it, and the
            error must not echo it).
    """
    if has_surrogate(request.tool.name):
        raise SchemaViolation("the tool name holds a lone surrogate (text that is not Unicode)")
    return registry.resolve(request.tool.name, request.tool.requested_version)
