"""A versioned tool registry.

Several versions of one tool may be registered; a request names a tool and optionally a
version. Resolution is exact when the version is registered, otherwise the newest
registered version of the same major that is at least the requested one; anything else —
unknown name, disabled tool, incompatible version — is a typed resolution error raised
before anything happens. LangChain ``BaseTool`` objects (wrapped by
:func:`~execgraph.tools.langchain.from_langchain`, which reads what each declares; an
undeclared one is irreversible) and adapters register directly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from langchain_core.tools import BaseTool

from execgraph.state.errors import (
    IncompatibleVersionError,
    ToolDisabledError,
    ToolTypeError,
    UnknownToolError,
)
from execgraph.tools.adapters.base import Adapter
from execgraph.tools.langchain import from_langchain
from execgraph.tools.spec import ToolSpec

__all__ = ["ToolRegistry", "from_langchain"]


@lru_cache(maxsize=1024)
def _semver(version: str) -> tuple[int, ...]:
    """Leading numeric parts of a version (``1.2.0-beta`` -> (1, 2, 0)); every call resolves."""
    numbers = re.findall(r"\d+", version.split("-")[0].split("+")[0])
    return tuple(int(n) for n in numbers[:3]) or (0,)


ToolLike = ToolSpec | BaseTool | Adapter


class ToolRegistry:
    """Holds every registered version of every tool."""

    def __init__(self, tools: Iterable[ToolLike] = ()) -> None:
        self._versions: dict[str, dict[str, ToolSpec]] = {}
        for item in tools:
            self.register(item)

    def register(self, item: ToolLike) -> None:
        """Add a ToolSpec, a LangChain tool, or every tool of an adapter."""
        if isinstance(item, ToolSpec):
            self._versions.setdefault(item.name, {})[item.version] = item
        elif isinstance(item, BaseTool):
            self.register(from_langchain(item))
        elif isinstance(item, Adapter):
            for spec in item.tools():
                self.register(spec)
        else:
            raise ToolTypeError(f"cannot register {type(item).__name__} as a tool")

    def disable(self, name: str, version: str | None = None) -> None:
        """Disable one version, or every version, of a tool."""
        versions = self._versions.get(name, {})
        for v, spec in list(versions.items()):
            if version is None or v == version:
                versions[v] = spec.with_(disabled=True)

    def resolve(self, name: str, requested_version: str | None = None) -> ToolSpec:
        """The exact tool version a request will run, or a ResolutionError."""
        versions = self._versions.get(name)
        if not versions:
            raise UnknownToolError(f"no tool named {name!r} is registered")
        enabled = {v: s for v, s in versions.items() if not s.disabled}
        if requested_version is not None and requested_version in versions:
            candidates = {requested_version: versions[requested_version]}
        elif requested_version is None:
            candidates = enabled or versions
        else:
            wanted = _semver(requested_version)
            candidates = {
                v: s
                for v, s in (enabled or versions).items()
                if _semver(v)[:1] == wanted[:1] and _semver(v) >= wanted
            }
            if not candidates:
                raise IncompatibleVersionError(
                    f"tool {name!r} has no version compatible with {requested_version!r}"
                )
        spec = candidates[max(candidates, key=_semver)]
        if spec.disabled:
            raise ToolDisabledError(f"tool {spec.key} is disabled")
        return spec

    def names(self) -> list[str]:
        """Names with at least one enabled version."""
        return sorted(
            n for n, vs in self._versions.items() if any(not s.disabled for s in vs.values())
        )

    def latest(self) -> list[ToolSpec]:
        """The newest enabled version of every tool (what a model is offered)."""
        out = []
        for name in self.names():
            enabled = {v: s for v, s in self._versions[name].items() if not s.disabled}
            out.append(enabled[max(enabled, key=_semver)])
        return out

    def __contains__(self, name: object) -> bool:
        return name in self._versions
