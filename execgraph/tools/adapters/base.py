"""The adapter Protocol: what every bridge to the world provides.

An adapter owns one kind of resource (a workspace directory, an HTTP client, a database,
a browser) and exposes it as a set of :class:`~execgraph.tools.spec.ToolSpec`, each of
which runs with an :class:`~execgraph.tools.invocation.InvokeContext`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from execgraph.tools.spec import ToolSpec

__all__ = ["Adapter"]


@runtime_checkable
class Adapter(Protocol):
    """A bundle of tools sharing one resource."""

    name: str

    def tools(self) -> list[ToolSpec]:
        """The tools this adapter offers, each bound to this adapter's resource."""
        ...

    def close(self) -> None:
        """Release the resource (connections, browser, processes)."""
        ...
