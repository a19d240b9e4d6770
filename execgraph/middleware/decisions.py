"""A person's answer to an approval, in execgraph's shape or HumanInTheLoopMiddleware's.

An agent built with ``create_agent`` may already have a client that answers
``HumanInTheLoopMiddleware``'s interrupts. The executor asks about one call per interrupt,
so both shapes carry one decision:

- execgraph's: ``"approve"``, ``"reject"``, or ``{"action": "approve" | "reject" | "edit",
  "reason": ..., "arguments": {...}, "approver": ...}``;
- HumanInTheLoopMiddleware's: ``{"type": "approve"}``, ``{"type": "reject", "message":
  ...}``, ``{"type": "edit", "edited_action": {"name": <the same tool>, "args": {...}}}``,
  or a ``{"decisions": [one of these]}`` response holding exactly one.

An answer that fits neither (an edit naming another tool, an edit without arguments, a
``respond``, several decisions, anything else) is refused: :func:`decision_schema` is the
approval interrupt's ``response_schema``, so LangGraph raises the ``ValidationError``
(saying what to send) from ``invoke`` and saves nothing: the run stays paused on the same
question, to be answered again. Nothing of the refused answer is echoed back but its type
names: it is a client's data.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any

from pydantic import PlainValidator, ValidationError, WithJsonSchema

from execgraph.state.contracts import ApprovalDecision

__all__ = ["ACCEPTED", "decision_schema", "read_decision"]

ACCEPTED = (
    'answer with "approve", "reject", {"action": "approve" | "reject" | "edit", '
    '"arguments": {...}, "reason": ...}, or one HumanInTheLoopMiddleware decision: '
    '{"type": "approve"}, {"type": "reject", "message": ...}, {"type": "edit", '
    '"edited_action": {"name": <this tool>, "args": {...}}}'
)

_JSON_SCHEMA: dict[str, Any] = {
    "description": ACCEPTED,
    "anyOf": [
        {"type": "string", "enum": ["approve", "reject"]},
        {"type": "object"},
    ],
}


def _refuse(why: str) -> ValueError:
    return ValueError(f"not an approval decision: {why}; {ACCEPTED}")


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _refuse(f"an edit needs {where} as an object, got {type(value).__name__}")
    if not all(isinstance(k, str) for k in value):
        raise _refuse(f"{where} must have text keys")
    return dict(value)


def _hitl(value: Mapping[str, Any], tool: str) -> ApprovalDecision:
    """One HumanInTheLoopMiddleware decision as execgraph's."""
    kind = value.get("type")
    if kind == "approve":
        return ApprovalDecision(action="approve")
    if kind == "reject":
        message = value.get("message", "")
        if not isinstance(message, str):
            raise _refuse("a rejection's message must be text")
        return ApprovalDecision(action="reject", reason=message)
    if kind == "edit":
        action = value.get("edited_action")
        if not isinstance(action, Mapping):
            raise _refuse('an edit needs "edited_action": {"name": ..., "args": {...}}')
        if action.get("name") != tool:
            raise _refuse(f"an edit may change the arguments of {tool!r}, never the tool")
        args = _arguments(action.get("args"), '"edited_action.args"')
        return ApprovalDecision(action="edit", arguments=args)
    if kind == "respond":
        raise _refuse("a respond decision is not taken: the call runs or is rejected")
    raise _refuse('"type" must be "approve", "reject" or "edit"')


def read_decision(value: Any, tool: str) -> ApprovalDecision:
    """The decision ``value`` says about a call of ``tool``.

    Raises:
        ValueError: ``value`` is no decision of either shape (its message says what is).
    """
    if isinstance(value, ApprovalDecision):
        return value
    if isinstance(value, str):
        if value == "approve":
            return ApprovalDecision(action="approve")
        if value == "reject":
            return ApprovalDecision(action="reject")
        raise _refuse("only approve and reject may be given as text")
    if not isinstance(value, Mapping):
        raise _refuse(f"got {type(value).__name__}")
    if "decisions" in value:
        decisions = value["decisions"]
        if not isinstance(decisions, list) or len(decisions) != 1:
            raise _refuse(
                '"decisions" must hold exactly one decision: each call is asked about '
                "in its own interrupt (answer each by its interrupt id)"
            )
        return read_decision(decisions[0], tool)
    if "type" in value:
        return _hitl(value, tool)
    if "action" not in value:
        raise _refuse('an object needs "action" or "type"')
    try:
        decision = ApprovalDecision.model_validate(dict(value))
    except ValidationError as exc:
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e.get("loc")})
        raise _refuse(f"invalid {', '.join(fields) or 'fields'}") from None
    if decision.action == "edit":
        _arguments(decision.arguments, '"arguments"')
    return decision


@lru_cache(maxsize=256)  # bounded: the name is the model's, whatever it sent
def decision_schema(tool: str) -> Any:
    """The ``response_schema`` of an approval of ``tool``: validates an answer into an
    :class:`~execgraph.state.contracts.ApprovalDecision` (an edit pinned to ``tool``)."""

    def validate(value: Any) -> ApprovalDecision:
        return read_decision(value, tool)

    return Annotated[Any, PlainValidator(validate), WithJsonSchema(_JSON_SCHEMA)]
