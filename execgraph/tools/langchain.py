"""LangChain tools as ToolSpecs: a declared effect, the model's schema, LangGraph's injections.

**Declaring.** A LangChain tool says what it does the LangChain way, in its ``metadata``
or its ``tags``, read when it is wrapped (by :func:`from_langchain`, by registering it, or
by handing it to ``build_graph``)::

    @tool
    def search(query: str) -> str: ...
    search.metadata = {"effect": "read"}                  # or: search.tags = ["effect:read"]

    save = StructuredTool.from_function(save_note, metadata={"effect": "write",
                                                             "locks": ["file:{path}"]})

Keys: ``effect``, ``idempotent``, ``locks``, ``path_args``, ``targets``, ``timeout_s``,
``cost_usd``, ``version``; tags ``effect:read`` / ``effect:write`` /
``effect:irreversible`` and ``idempotent``. An MCP tool's annotations declare it as well
(:mod:`execgraph.tools.mcp`). Keyword arguments of :func:`from_langchain` override all
of these. A lock key ``file:{arg}`` makes ``arg`` a path argument unless ``path_args`` is
given: it is confined to the workspace, and the tool receives it as an absolute path
inside the workspace (a LangChain tool has no other way to know where that is).

**An undeclared tool is irreversible**, never a read: its execution record is on disk
before it runs, it is never retried (nor run again blindly after a crash), and the
default policy asks a person before every call. Declare a read and it runs without one.

**What the model sees, what the tool gets.** The model is offered the tool's
``tool_call_schema`` (injected arguments left out) and its arguments are validated against
it, unknown ones refused. When the tool runs, LangGraph's injections are filled as
``ToolNode`` fills them: ``InjectedToolCallId`` (the call's id), ``InjectedState`` (the
run's graph state, or one field of it), ``InjectedStore`` (the graph's store) and
``ToolRuntime``. The executor runs the tool inside the graph's runnable context, so the
tool reports to the run's callbacks (``on_tool_start`` / ``on_tool_end`` /
``on_tool_error``: a LangSmith trace shows it), ``get_stream_writer()`` streams, and
``interrupt()`` pauses the run (:mod:`execgraph.nodes.executor.paused` says what that
means for the call's execution record).

**Errors.** A ``ToolException`` is the tool's message for the model (a ``ModelRetry``), and
so is what the tool's ``handle_tool_error`` makes of one; any other exception is withheld
from the model, as for every tool. A tool that returns a LangGraph ``Command`` is refused:
the executor, not the tool, updates the run's state.
"""

from __future__ import annotations

import contextlib
import copy
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Union, cast, get_args, get_origin, get_type_hints

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, ToolException
from langchain_core.tools.base import get_all_basemodel_annotations

# The state a tool sees is read as LangGraph's own ToolNode reads it for a Send: through
# the task's read function, which LangGraph keeps under a private config key.
from langgraph._internal._constants import CONFIG_KEY_READ
from langgraph.config import CONF, CONFIG_KEY_RUNTIME, get_config
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from execgraph.state.errors import ModelRetry, ToolDeclarationError, ToolTypeError
from execgraph.tools.annotations import declared_by_hints
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.paths import confine_path
from execgraph.tools.spec import Effect, ToolSpec, resolve_awaitable

__all__ = ["UNDECLARED_EFFECT", "LangChainRunner", "declaration", "from_langchain"]

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
)
_SEQUENCES = ("locks", "path_args", "targets")
_FILE_LOCK = re.compile(r"file:\{(\w+)\}")


def declaration(tool: BaseTool) -> dict[str, Any]:
    """What a LangChain tool declares about itself: its metadata keys, its tags, and the MCP
    annotations its metadata carries (:mod:`execgraph.tools.annotations`; an explicit
    ``effect`` wins over them).

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
    if effect is not None:
        fields["effect"] = effect
    if version is not None:
        fields["version"] = version
    chosen = fields.pop("effect", UNDECLARED_EFFECT)
    for key in _SEQUENCES:
        if key in fields:
            fields[key] = _strings(tool, key, fields[key])
    model, from_json_schema = _input_model(tool)
    if "path_args" not in fields:
        locked = (
            m.group(1) for lock in fields.get("locks", ()) if (m := _FILE_LOCK.fullmatch(lock))
        )
        fields["path_args"] = tuple(dict.fromkeys(a for a in locked if a in model.model_fields))
    runner = LangChainRunner(
        tool,
        _injections(tool, model),
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


# --------------------------------------------------------------------------- the schema


def _input_model(tool: BaseTool) -> tuple[type[BaseModel], bool]:
    """The strict model of what the model may send (``tool_call_schema``), and whether it
    was built from a JSON schema (an MCP tool's)."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return _json_schema_model(tool.name, cast(dict[str, Any], tool.args_schema)), True
    base = cast(type[BaseModel], schema)
    # Unknown arguments are refused, not silently dropped, as for every other tool.
    strict = type(
        base.__name__, (base,), {"model_config": {**base.model_config, "extra": "forbid"}}
    )
    return strict, False


class _JsonSchemaInput(BaseModel):
    """A tool input described by a JSON schema: offered as that schema, validated by the
    fields it names (types of the top level; anything deeper is the server's to check)."""

    model_config = ConfigDict(extra="forbid")
    declared_schema: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(cls.declared_schema)


_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
    "null": type(None),
}


def _json_type(prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    if isinstance(kind, str):
        return _JSON_TYPES.get(kind, Any)
    options = (
        [{"type": k} for k in kind]
        if isinstance(kind, list)
        else prop.get("anyOf") or prop.get("oneOf") or []
    )
    parts = [_json_type(p) for p in options]
    if not parts or Any in parts:
        return Any
    return Union[tuple(parts)]  # noqa: UP007  # built from values, not written out


def _json_schema_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    required = set(schema.get("required") or ())
    fields: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = _json_type(prop)
        fields[key] = (kind, ...) if key in required else (kind | None, prop.get("default"))
    model = create_model(f"{name}_input", __base__=_JsonSchemaInput, **fields)
    model.declared_schema = copy.deepcopy(schema)
    return model


# --------------------------------------------------------------------------- injections


@dataclass(frozen=True)
class _Injections:
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


def _injections(tool: BaseTool, model: type[BaseModel]) -> _Injections:
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
        return _Injections()
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
    return _Injections(call_id=call_id, state=state, store=store, runtime=runtime)


def _graph_state(config: Mapping[str, Any]) -> Any:
    """The run's state as the graph holds it now, with this node's writes so far (how
    ``ToolNode`` reads it for a tool called through ``Send``); {} outside a graph."""
    read = (config.get(CONF) or {}).get(CONFIG_KEY_READ)
    if read is None:
        return {}
    channels = [c for c in read.args[1] if not c.startswith("__") and ":" not in c]
    return read(channels, True)


def _injected(tool: BaseTool, wanted: _Injections, ctx: InvokeContext) -> dict[str, Any]:
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
                "compile it with one (or run it where LangGraph provides one)"
            )
        out[wanted.store] = store
    if wanted.runtime is not None:
        from langgraph.prebuilt.tool_node import ToolRuntime

        out[wanted.runtime] = ToolRuntime(
            state=state,
            context=getattr(runtime, "context", None),
            config=cast(Any, config),
            stream_writer=getattr(runtime, "stream_writer", lambda _chunk: None),
            tool_call_id=ctx.call_id,
            store=store,
            tools=[tool],
            execution_info=getattr(runtime, "execution_info", None),
            server_info=getattr(runtime, "server_info", None),
        )
    return out


# --------------------------------------------------------------------------- running


def _handled(exc: Exception, flag: Any, fallback: str) -> str:
    """What the tool's ``handle_*_error`` setting makes of ``exc``, as text."""
    if isinstance(flag, str):
        return flag
    if callable(flag):
        text = _plain(flag(exc))
        return text if isinstance(text, str) else str(exc)
    return str(exc.args[0]) if exc.args else fallback


def _plain(content: Any) -> Any:
    """Message content made only of text blocks (an MCP tool's) as its text."""
    if (
        isinstance(content, list)
        and content
        and all(isinstance(b, dict) and b.get("type") == "text" for b in content)
    ):
        return "\n".join(str(b.get("text", "")) for b in content)
    return content


class LangChainRunner:
    """Runs one LangChain tool for the executor (a ToolSpec's ``run``).

    LangChain reports the run to the callbacks of the runnable context it runs in, so the
    executor does not report it again (``nodes/executor/invoke.py``).
    """

    def __init__(
        self,
        tool: BaseTool,
        injections: _Injections,
        *,
        committed: bool,
        path_args: tuple[str, ...] = (),
        drop_unset: bool = False,
    ) -> None:
        self.tool = tool
        self._tool_errors, self._validation_errors = (
            tool.handle_tool_error,
            tool.handle_validation_error,
        )
        if self._tool_errors or self._validation_errors:
            # Handled errors must stay errors: the handler's text is the model's message.
            self._run_tool = tool.model_copy(
                update={"handle_tool_error": False, "handle_validation_error": False}
            )
        else:
            self._run_tool = tool
        self._injections = injections
        self._committed = committed
        self._path_args = path_args
        self._drop_unset = drop_unset
        self._async_only = getattr(tool, "func", None) is None and bool(
            getattr(tool, "coroutine", None)
        )

    def __call__(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        payload = args.model_dump()
        if self._drop_unset:  # a JSON-schema tool: an omitted optional argument stays omitted
            payload = {k: v for k, v in payload.items() if v is not None}
        for name in self._path_args:
            if isinstance(payload.get(name), str):
                payload[name] = str(confine_path(ctx.workspace_root, payload[name]))
        if self._injections:
            payload.update(_injected(self.tool, self._injections, ctx))
        tool_input: dict[str, Any] = payload
        if self._injections.call_id:
            tool_input = {"name": self.tool.name, "args": payload, "id": ctx.call_id}
            tool_input["type"] = "tool_call"
        try:
            if self._async_only:
                value = resolve_awaitable(self._run_tool.ainvoke(tool_input), ctx)
            else:
                value = self._run_tool.invoke(tool_input)
        except ToolException as exc:
            if not self._tool_errors:
                raise
            raise ModelRetry(_handled(exc, self._tool_errors, "Tool execution error")) from exc
        except ValidationError as exc:
            if not self._validation_errors:
                raise
            message = _handled(exc, self._validation_errors, "Tool input validation error")
            raise ModelRetry(message) from exc
        return AdapterOutput(data=self._data(value), committed=self._committed)

    def _data(self, value: Any) -> Any:
        if isinstance(value, Command):
            raise ToolTypeError(
                f"tool {self.tool.name!r} returned a LangGraph Command: the executor, not "
                "a tool, updates the run's state; return the value instead"
            )
        if isinstance(value, ToolMessage):
            if value.status == "error":
                raise ModelRetry(str(_plain(value.content)))
            return _plain(value.content)
        return _plain(value)
