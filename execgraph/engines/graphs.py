"""A run's graph from names: the tool sets and models an engine was configured with.

An engine builds a run's graph from its :class:`~execgraph.engines.spec.RunSpec`, which
holds names only: an architecture, a model name and a tool set's name. The names mean
what the operator registered here when the engine (a Temporal worker, this process)
started — ``execgraph worker --tools pkg.mod:tools`` registers that list under the name
``pkg.mod:tools`` (or ``--tools ledger=pkg.mod:tools`` under ``ledger``), and
``Graphs.add_tools`` does the same from Python. A name nobody registered is refused; it
is never imported. Only an engine that acts for the operator in the operator's own
process (the command line's embedded engine, whose ``--tools`` the user typed) may be
told to import a ``module:attr`` name on first use (``import_refs=True``).

The demo registers itself here like any other tool set (:func:`execgraph.demo.register`).
A model name is a registered one (``"offline"``: the demo's scripted policy) or a
``"provider:model"`` string for LangChain's ``init_chat_model``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.engines.spec import RunSpec
from execgraph.graph.build import ARCHITECTURES, build_graph
from execgraph.graph.workflow import Stage
from execgraph.nodes.deps import CheckFn
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import UsageError
from execgraph.tools.registry import ToolLike
from execgraph.tools.tool_source import load_tools, tool_source

__all__ = ["Graphs", "ToolSet"]

ToolsFor = Callable[[Path], list[ToolLike]]
"""A tool set's tools for one run's workspace."""


@dataclass(frozen=True)
class ToolSet:
    """A named set of tools, with the success checks and workflow stages that go with it."""

    name: str
    tools: ToolsFor
    checks: Mapping[str, CheckFn] = field(default_factory=dict)
    stages: Sequence[Stage] | None = None


class Graphs:
    """The tool sets and models runs may name, and the graphs built from them.

    ``import_refs``: an unregistered tool set name of the form ``module:attr`` is imported
    (and checked) on first use. Only for an engine acting in its operator's own process;
    a worker serving clients keeps it False.
    """

    def __init__(self, *, import_refs: bool = False) -> None:
        self.import_refs = import_refs
        self._sets: dict[str, ToolSet] = {}
        self._models: dict[str, Callable[[], Any]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ registering

    def add(self, tool_set: ToolSet) -> ToolSet:
        """Register ``tool_set`` under its name (a name is registered once)."""
        with self._lock:
            if tool_set.name in self._sets:
                raise UsageError(f"a tool set named {tool_set.name!r} is registered already")
            self._sets[tool_set.name] = tool_set
        return tool_set

    def add_tools(
        self,
        name: str,
        tools: Iterable[ToolLike] | ToolsFor,
        *,
        checks: Mapping[str, CheckFn] | None = None,
        stages: Sequence[Stage] | None = None,
    ) -> ToolSet:
        """Register a list of tools, or a function of the run's workspace returning one."""
        if callable(tools) and not isinstance(tools, list | tuple):
            factory: ToolsFor = tools
        else:
            fixed = list(tools)

            def factory(workspace: Path) -> list[ToolLike]:
                return fixed

        return self.add(ToolSet(name, factory, dict(checks or {}), stages))

    def add_ref(self, ref: str) -> ToolSet:
        """Register the tools ``[name=]package.module:attr`` names, imported and checked
        now (a list of tools, or a factory of the workspace); the name defaults to the
        reference itself."""
        name, sep, target = ref.partition("=")
        name, target = (name.strip(), target.strip()) if sep else (ref.strip(), ref.strip())
        if not name:
            raise UsageError(f"--tools {ref!r}: the name before '=' is empty")
        tool_source(target)  # a bad reference is refused here, before anything runs
        return self.add(ToolSet(name, lambda workspace: load_tools(target, workspace)))

    def add_model(self, name: str, make: Callable[[], Any]) -> None:
        """Register a model name (``make()`` builds the chat model, once per graph)."""
        with self._lock:
            self._models[name.strip().lower()] = make

    # ------------------------------------------------------------------ reading

    @property
    def names(self) -> list[str]:
        """The registered tool sets' names, sorted."""
        return sorted(self._sets)

    def tool_set(self, name: str) -> ToolSet:
        """The tool set registered as ``name``; anything else is refused, never imported
        (unless this engine imports references: see the class)."""
        found = self._sets.get(name)
        if found is not None:
            return found
        if self.import_refs:
            with self._lock:
                if name in self._sets:
                    return self._sets[name]
            try:
                return self.add_ref(name)
            except UsageError as exc:
                if "registered already" not in str(exc):
                    raise
                return self._sets[name]
        shown = ", ".join(self.names) or "none"
        raise UsageError(f"no tool set named {name!r} is registered here (registered: {shown})")

    def model(self, name: str) -> Any:
        """The chat model a run names: a registered one, else the ``provider:model``
        string as ``build_graph`` takes it."""
        make = self._models.get(name.strip().lower())
        return make() if make is not None else name

    def tools(self, spec: RunSpec, workspace: Path) -> list[ToolLike]:
        """The tools of ``spec``'s tool set for ``workspace``."""
        workspace.mkdir(parents=True, exist_ok=True)
        return self.tool_set(spec.tools).tools(workspace)

    def build(self, spec: RunSpec, *, workspace: Path, **kwargs: Any) -> RunGraph:
        """Compile ``spec``'s graph over ``workspace``; ``kwargs`` go to
        :func:`~execgraph.graph.build.build_graph` (``home``, ``store``, ``checkpointer``,
        ``database``, ...)."""
        if spec.arch not in ARCHITECTURES:
            raise UsageError(
                f"unknown architecture {spec.arch!r}; choose one of {', '.join(ARCHITECTURES)}"
            )
        chosen = self.tool_set(spec.tools)
        return build_graph(
            spec.arch,
            model=kwargs.pop("model", None) or self.model(spec.model),
            tools=self.tools(spec, workspace),
            checks=chosen.checks,
            stages=chosen.stages,
            workspace=workspace,
            **kwargs,
        )
