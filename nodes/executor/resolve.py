"""Stage 1 — resolve: the exact tool version a request runs (or a resolution error)."""

from __future__ import annotations

from execgraph.state.contracts import ToolExecutionRequest
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = ["resolve"]


def resolve(request: ToolExecutionRequest, registry: ToolRegistry) -> ToolSpec:
    """Look the tool up by name and requested version; nothing has happened if this fails.

    Raises:
        ResolutionError: unknown, disabled, or no compatible version.
    """
    return registry.resolve(request.tool.name, request.tool.requested_version)
