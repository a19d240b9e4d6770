"""The schema an approval's answer must fit under ``create_agent``: one decision.

An agent built with ``create_agent`` may already have a client that answers
``HumanInTheLoopMiddleware``'s interrupts; the executor's approval takes that shape and
execgraph's own, both read by the one reader every approval uses
(:func:`execgraph.nodes.executor.decisions.read_decision`).

:func:`decision_schema` is the approval interrupt's ``response_schema``: an answer that
fits neither shape (an edit naming another tool, an edit without arguments, a
``respond``, several decisions, anything else) is refused by LangGraph, which raises the
``ValidationError`` (saying what to send) from ``invoke`` and saves nothing: the run stays
paused on the same question, to be answered again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from pydantic import PlainValidator, WithJsonSchema

from execgraph.nodes.executor.decisions import RESUME_VALUES, read_decision
from execgraph.state.contracts import ApprovalDecision

__all__ = ["decision_schema", "read_decision"]

_JSON_SCHEMA: dict[str, Any] = {
    "description": f"one approval decision: {RESUME_VALUES}",
    "anyOf": [
        {"type": "string", "enum": ["approve", "reject"]},
        {"type": "object"},
    ],
}


@lru_cache(maxsize=256)  # bounded: the name is the model's, whatever it sent
def decision_schema(tool: str) -> Any:
    """The ``response_schema`` of an approval of ``tool``: validates an answer into an
    :class:`~execgraph.state.contracts.ApprovalDecision` (an edit pinned to ``tool``; a
    refused answer's ``UsageError`` is a ``ValueError``, which pydantic reports)."""

    def validate(value: Any) -> ApprovalDecision:
        return read_decision(value, tool)

    return Annotated[Any, PlainValidator(validate), WithJsonSchema(_JSON_SCHEMA)]
