"""LangGraph's injections, filled as ``ToolNode`` fills them.

A tool may take what the model does not give: ``InjectedToolCallId`` (the call's id),
``InjectedState`` (the run's graph state, or one field of it), ``InjectedStore`` (the
graph's store) and ``ToolRuntime``. They are found once, when the tool is wrapped
(:func:`find_injections`), and filled at each call from the graph the executor runs the
tool in (:func:`injected`), so a tool written for ``ToolNode`` runs unchanged.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, cast, get_args, get_origin, get_type_hints

from langchain_core.tools import BaseTool, InjectedToolCallId
from langchain_core.tools.base import get_all_basemodel_annotations

# The state a tool sees is read as LangGraph's own ToolNode reads it for a Send: through
# the task's read function, which LangGraph keeps under a private config key.
from langgraph._internal._constants import CONFIG_KEY_READ
from langgraph.config import CONF, CONFIG_KEY_RUNTIME, get_config
from pydantic import BaseModel

from execgraph.state.errors import ToolDeclarationError
from execgraph.tools.invocation import InvokeContext

__all__ = ["Injections", "find_injections", "injected"]


@dataclass(frozen=True)
class Injections:
    """What the tool takes that the model does not give (found once, when wrapped)."""

    call_id: bool = False
    state: Mapping[str, str | None] = field(default_factory=dict)  # parameter -> field
    store: str | None = None
    runtime: str | None = None

    def __bool__(self) -> bool:
        return bool(self.state) or self.store is not None or self.runtime is not None


def _marker(hint: Any, kind: type) -> Any:
    """The ``kind`` marker in a type hint (through ``Annotated``, unions, generics)."""
    if isinstance(hint, kind) or (isinstance(hint, type) and issubclass(hint, kind)):
        return hint
    origin = get_origin(hint)
    if origin in (Annotated, Union, types.UnionType):
        for arg in get_args(hint):
            found = _marker(arg, kind)
            if found is not None:
                return found
    elif isinstance(origin, type) and issubclass(origin, kind):
        return origin
    return None


def find_injections(tool: BaseTool, model: type[BaseModel]) -> Injections:
    """What ``tool`` takes that ``model`` (the model's schema) leaves out, by its markers."""
    hints: dict[str, Any] = {}
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if func is not None:
        with contextlib.suppress(NameError, TypeError):  # unresolvable: the schema has them
            hints.update(get_type_hints(func, include_extras=True))
    schema = tool.args_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        hints.update(get_all_basemodel_annotations(schema))
    hidden = {n: h for n, h in hints.items() if n != "return" and n not in model.model_fields}
    if not hidden:  # the model gives everything (most tools): LangGraph's markers not needed
        return Injections()
    from langgraph.prebuilt.tool_node import InjectedState, InjectedStore, ToolRuntime

    call_id, store, runtime = False, None, None
    state: dict[str, str | None] = {}
    for name, hint in hidden.items():
        if _marker(hint, InjectedToolCallId) is not None:
            call_id = True
        elif (found := _marker(hint, InjectedState)) is not None:
            state[name] = found.field if isinstance(found, InjectedState) else None
        elif _marker(hint, InjectedStore) is not None:
            store = name
        elif _marker(hint, ToolRuntime) is not None or name == "runtime":
            runtime = name  # ToolNode fills a hidden ``runtime`` parameter too
    return Injections(call_id=call_id, state=state, store=store, runtime=runtime)


def _graph_state(config: Mapping[str, Any]) -> Any:
    """The run's state as the graph holds it now, with this node's writes so far (how
    ``ToolNode`` reads it for a tool called through ``Send``); {} outside a graph."""
    read = (config.get(CONF) or {}).get(CONFIG_KEY_READ)
    if read is None:
        return {}
    channels = [c for c in read.args[1] if not c.startswith("__") and ":" not in c]
    return read(channels, True)


def injected(tool: BaseTool, wanted: Injections, ctx: InvokeContext) -> dict[str, Any]:
    """The values of ``wanted`` for this call, read from the graph it runs in."""
    try:
        config: Mapping[str, Any] = get_config()
    except RuntimeError:  # called outside a graph (a test, a script)
        config = {}
    runtime = (config.get(CONF) or {}).get(CONFIG_KEY_RUNTIME)
    store = getattr(runtime, "store", None)
    out: dict[str, Any] = {}
    state = _graph_state(config) if wanted.state or wanted.runtime else {}
    for name, key in wanted.state.items():
        out[name] = state if key is None else state[key]
    if wanted.store is not None:
        if store is None:
            raise ToolDeclarationError(
                f"tool {tool.name!r} takes an InjectedStore, but the graph has no store: "
                "give build_graph one (store=InMemoryStore(), any LangGraph BaseStore), "
                "or run it where LangGraph provides one"
            )
        out[wanted.store] = store
    if wanted.runtime is not None:
        from langgraph.prebuilt.tool_node import ToolRuntime

        out[wanted.runtime] = ToolRuntime(
            state=state,
            context=getattr(runtime, "context", None),
            config=cast(Any, config),
            stream_writer=getattr(runtime, "stream_writer", lambda _chunk: None),
            tool_call_id=ctx.tool_call_id or ctx.call_id,
            store=store,
            tools=[tool],
            execution_info=getattr(runtime, "execution_info", None),
            server_info=getattr(runtime, "server_info", None),
        )
    return out
