"""The tools a graph is built over, refused at build time when their names cannot work.

A model names a tool to call it, so a name must mean one thing. ``build_graph`` refuses
(a :class:`~execgraph.state.errors.ToolDeclarationError`, before any run) a tool named
like a run-control action (``finish``, ``ask_user``, ``abort``, ``revise_plan``: the model
would be ending the run, not calling it) and two *different* tools under one
``name@version`` (say a LangChain ``@tool`` and a ToolSpec both named ``search``, both at
the default ``1.0.0``): the registry would keep the last one silently. Several versions of
one tool are what the registry is for and stay allowed, and so does the same tool object
given twice. The registry also remembers the order the tools were given in, which the
fixed workflow's default stages follow.

A name must also mean one *offerer*, and look like one name. A tool an MCP server offers
(origin ``mcp:<server>``) may not take a name an application tool (or another server)
already has: the model would call one believing it the other, and a server could shadow
the application's ``pay`` with a ``pay`` of its own. And a name that looks like another
(``Pay`` beside ``pay``, ``get-sum`` beside ``get_sum``, ``fi1e`` beside ``file``) is
refused: a person approving ``pay`` must not be shown a different tool.
"""

from __future__ import annotations

from collections.abc import Iterable

from execgraph.nodes.deps import CONTROL_TOOLS
from execgraph.state.errors import ToolDeclarationError
from execgraph.tools.registry import ToolLike, ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = ["DeclaredRegistry", "declaration_order", "skeleton"]


class DeclaredRegistry(ToolRegistry):
    """A :class:`ToolRegistry` that refuses ambiguous names and keeps declaration order."""

    def __init__(
        self, tools: Iterable[ToolLike] = (), *, reserved: Iterable[str] = CONTROL_TOOLS
    ) -> None:
        """``reserved``: names no tool may take (the run-control actions of execgraph's
        graphs; a ``create_agent`` agent has none)."""
        self._reserved = tuple(reserved)
        self._given: set[int] = set()  # top-level objects seen: the same one twice is one
        self._declared: dict[tuple[str, str], ToolSpec] = {}
        self._origins: dict[str, str] = {}
        self._looks: dict[str, str] = {}  # skeleton -> the name that has it
        self._order: list[str] = []
        super().__init__(tools)

    def register(self, item: ToolLike) -> None:
        """Add a tool as :meth:`ToolRegistry.register` does, after refusing a name that
        is reserved or already taken by a different tool at the same version."""
        if id(item) in self._given:
            return
        self._given.add(id(item))
        if isinstance(item, ToolSpec):
            self._check(item)
        super().register(item)

    def _check(self, spec: ToolSpec) -> None:
        if skeleton(spec.name) in {skeleton(name) for name in self._reserved}:
            raise ToolDeclarationError(
                f"tool name {spec.name!r} is reserved for run control "
                f"({', '.join(CONTROL_TOOLS)}): the model would stop the run instead of "
                "calling the tool; give the tool another name"
            )
        origin = self._origins.setdefault(spec.name, spec.origin)
        if origin != spec.origin:
            raise ToolDeclarationError(
                f"two tools named {spec.name!r} are offered, by {_offerer(origin)} and by "
                f"{_offerer(spec.origin)}: a name must mean one tool; load the server's "
                "tools with tool_name_prefix=True, or leave one of them out"
            )
        lookalike = self._looks.setdefault(skeleton(spec.name), spec.name)
        if lookalike != spec.name:
            raise ToolDeclarationError(
                f"tool names {lookalike!r} and {spec.name!r} look alike: a person approving "
                "one could be shown the other; give one a distinct name"
            )
        earlier = self._declared.get((spec.name, spec.version))
        if earlier is not None and earlier != spec:
            raise ToolDeclarationError(
                f"two different tools are declared as {spec.key} (a LangChain tool "
                "registers as version 1.0.0 unless wrapped with from_langchain(version=...)); "
                "give one another name, or another version if it replaces the other"
            )
        self._declared[(spec.name, spec.version)] = spec
        if spec.name not in self._order:
            self._order.append(spec.name)

    def in_order(self) -> list[str]:
        """Names with an enabled version, in the order they were first given."""
        enabled = set(self.names())
        return [name for name in self._order if name in enabled]


def skeleton(name: str) -> str:
    """What a tool name looks like to a reader: case, ``-``/``_`` and the ASCII letters
    and digits that pass for each other (``0``/``o``, ``1``/``l``/``I``, ``rn``/``m``,
    ``vv``/``w``) folded together. Names are ASCII (:class:`ToolSpec` refuses others)."""
    folded = name.lower().replace("-", "_").replace("rn", "m").replace("vv", "w")
    return folded.translate(_LOOKALIKE)


_LOOKALIKE = str.maketrans({"0": "o", "1": "l", "i": "l"})


def _offerer(origin: str) -> str:
    return "the application" if origin == "application" else f"MCP server {origin[4:]!r}"


def declaration_order(registry: ToolRegistry) -> list[str]:
    """The tool names of ``registry`` in the order they were given (a plain registry,
    which does not remember it, gives them sorted)."""
    if isinstance(registry, DeclaredRegistry):
        return registry.in_order()
    return registry.names()
