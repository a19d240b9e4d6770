"""What the model may send a LangChain tool: its ``tool_call_schema``, made strict.

The model is offered the tool's ``tool_call_schema`` (injected arguments left out) and its
arguments are validated against it, unknown ones refused, as for every other tool. An MCP
tool describes its input by a JSON schema instead of a pydantic model: it is offered that
schema as it is and validated by the top-level fields it names (anything deeper is the
server's to check).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar, Union, cast

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, create_model

__all__ = ["input_model"]


def input_model(tool: BaseTool) -> tuple[type[BaseModel], bool]:
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
