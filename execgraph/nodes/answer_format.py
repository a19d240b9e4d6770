"""A structured answer: ``build_graph(..., response_format=Schema)``, as ``create_agent`` has.

The model gives its final answer by calling ``finish`` with the schema's fields as the
call's arguments (the way ``create_agent``'s ``ToolStrategy`` offers the schema as a tool,
so it works with any chat model that calls tools). The arguments are validated against the
schema where the reply is parsed: a finish that does not match, or an answer written as
plain text, goes back to the model with what is wrong, within the turn's repairs
(``max_repairs``), never to the verifier. An accepted finish is the run's
``structured_response``.

The state holds it as JSON data (a checkpoint never names a class to import: what a
stored run reads back is data, whichever process reads it); ``invoke`` and ``ainvoke``
return it validated as the schema's type, as ``create_agent`` does. The run's ``output``
is the same answer as JSON text, which success checks and ``execgraph status`` read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from execgraph.state.errors import UsageError

__all__ = ["AnswerFormat", "answer_format"]

_FINISH_DOC = "Declare the goal met; give the final answer, with these fields."


@dataclass(frozen=True, eq=False)
class AnswerFormat:
    """The schema a run's final answer must match, and what it asks of ``finish``."""

    schema: Any
    adapter: TypeAdapter[Any]
    parameters: dict[str, Any]

    def finish_tool(self) -> dict[str, Any]:
        """The ``finish`` control tool whose arguments are the answer's fields."""
        return {
            "type": "function",
            "function": {
                "name": "finish",
                "description": _FINISH_DOC,
                "parameters": self.parameters,
            },
        }

    def parse(self, arguments: Mapping[str, Any]) -> tuple[str, str | None]:
        """The answer as JSON text, or why ``arguments`` do not make one (for the model)."""
        try:
            value = self.adapter.validate_python(dict(arguments))
        except ValidationError as exc:
            wrong = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'the answer'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            return "", f"your finish does not match the answer's fields ({wrong}); call it again"
        data = self.adapter.dump_python(value, mode="json")
        return json.dumps(data, ensure_ascii=False, sort_keys=True), None

    def typed(self, data: Any) -> Any:
        """The stored answer (JSON data) as the schema's type."""
        return self.adapter.validate_python(data)


def answer_format(response_format: Any) -> AnswerFormat | None:
    """The :class:`AnswerFormat` of ``response_format``: a Pydantic model, a dataclass or
    a ``TypedDict`` (or ``create_agent``'s ``ToolStrategy``/``ProviderStrategy`` of one).

    Raises:
        UsageError: not such a type (a JSON-schema dict, a list type: an answer is an
            object whose fields are ``finish``'s arguments).
    """
    if response_format is None:
        return None
    schema = response_format
    if not isinstance(schema, type):  # a create_agent strategy names its schema
        schema = getattr(response_format, "schema", response_format)
    if not isinstance(schema, type):
        raise UsageError(
            "response_format takes a Pydantic model, a dataclass or a TypedDict, "
            f"got {response_format!r}"
        )
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(schema)
        parameters = adapter.json_schema()
    except Exception as exc:  # pydantic cannot build a schema of it
        raise UsageError(f"response_format {schema.__name__}: {exc}") from exc
    if parameters.get("type") != "object":
        raise UsageError(
            f"response_format {schema.__name__} is not an object with fields: "
            "use a Pydantic model, a dataclass or a TypedDict"
        )
    return AnswerFormat(schema, adapter, parameters)
