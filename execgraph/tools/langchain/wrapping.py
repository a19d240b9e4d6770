"""Wrapping: what a LangChain tool declares about itself, and the ToolSpec made from it.

The declaration is read the LangChain way (``metadata``, ``tags``, MCP annotations) and
keyword arguments of :func:`from_langchain` override it; nothing declared means
:data:`UNDECLARED_EFFECT`, never a read. The model's schema (:mod:`.input_schema`), the
LangGraph injections (:mod:`.injections`) and the runner (:mod:`.runner`) are found once,
here, when the tool is wrapped.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.tools import BaseTool

from execgraph.state.errors import ToolDeclarationError
from execgraph.tools.annotations import declared_by_hints, open_world_by_hints
from execgraph.tools.langchain.injections import find_injections
from execgraph.tools.langchain.input_schema import input_model
from execgraph.tools.langchain.runner import LangChainRunner
from execgraph.tools.spec import Effect, ToolSpec

__all__ = ["UNDECLARED_EFFECT", "declaration", "from_langchain"]

UNDECLARED_EFFECT: Effect = "irreversible"
"""The effect of a tool that declares none: never a read."""

_DECLARED = (
    "effect",
    "idempotent",
    "locks",
    "path_args",
    "targets",
    "timeout_s",
    "cost_usd",
    "version",
    "open_world",
)
_SEQUENCES = ("locks", "path_args", "targets")
_FILE_LOCK = re.compile(r"file:\{(\w+)\}")


def declaration(tool: BaseTool) -> dict[str, Any]:
    """What a LangChain tool declares about itself: its metadata keys, its tags, and the MCP
    annotations its metadata carries (:mod:`execgraph.tools.annotations`; an explicit
    ``effect`` wins over them, an ``openWorldHint: true`` holds over anything).

    Raises:
        ToolDeclarationError: its metadata and tags name different effects.
    """
    metadata = dict(tool.metadata or {})
    declared = {k: metadata[k] for k in _DECLARED if k in metadata}
    tags = list(tool.tags or ())
    tagged = {t.partition(":")[2] for t in tags if t.startswith("effect:")}
    named = tagged | ({declared["effect"]} if "effect" in declared else set())
    if len(named) > 1:
        raise ToolDeclarationError(
            f"tool {tool.name!r} declares more than one effect ({sorted(named)}) in its "
            "metadata and tags; declare one"
        )
    if tagged:
        declared["effect"] = tagged.pop()
    if "idempotent" in tags:
        declared.setdefault("idempotent", True)
    if "effect" not in declared:
        for key, value in (declared_by_hints(metadata) or {}).items():
            declared.setdefault(key, value)
    if open_world_by_hints(metadata):  # a narrowing: it holds over an explicit declaration
        declared["open_world"] = True
    return declared


def from_langchain(
    tool: BaseTool, *, effect: Effect | None = None, version: str | None = None, **extra: Any
) -> ToolSpec:
    """Wrap a LangChain ``BaseTool`` as a ToolSpec.

    What the tool declares (:func:`declaration`) is the default for every field; keyword
    arguments (``effect``, ``version``, any other ToolSpec field) override it. With no
    effect declared anywhere the tool is ``irreversible`` (:data:`UNDECLARED_EFFECT`).
    """
    fields = {**declaration(tool), **extra}
    if open_world_by_hints(tool.metadata or {}):
        fields["open_world"] = True  # a server's narrowing holds over any declaration
    if tool.return_direct:  # the tool's author set it: an MCP listing cannot
        fields.setdefault("return_direct", True)
    if effect is not None:
        fields["effect"] = effect
    if version is not None:
        fields["version"] = version
    chosen = fields.pop("effect", UNDECLARED_EFFECT)
    for key in _SEQUENCES:
        if key in fields:
            fields[key] = _strings(tool, key, fields[key])
    model, from_json_schema = input_model(tool)
    if "path_args" not in fields:
        locked = (
            m.group(1) for lock in fields.get("locks", ()) if (m := _FILE_LOCK.fullmatch(lock))
        )
        fields["path_args"] = tuple(dict.fromkeys(a for a in locked if a in model.model_fields))
    runner = LangChainRunner(
        tool,
        find_injections(tool, model),
        committed=chosen != "read",
        path_args=fields["path_args"],
        drop_unset=from_json_schema,
    )
    return ToolSpec(
        name=tool.name,
        version=str(fields.pop("version", "1.0.0")),
        description=tool.description or tool.name,
        input_model=model,
        effect=chosen,
        run=runner,
        **fields,
    )


def _strings(tool: BaseTool, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ToolDeclarationError(f"tool {tool.name!r}: {key} must be a list of strings")
    return tuple(value)
