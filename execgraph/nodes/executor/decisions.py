"""A person's answer to an approval, in execgraph's shape or HumanInTheLoopMiddleware's.

Written once, read by every place that takes an answer: the executor's approval stage and
the hybrid gate (:mod:`.stages.approval`), the check before a run resumes
(:func:`~.stages.approval.check_resume`), and ``ExecutorMiddleware``'s interrupt schema
(:mod:`execgraph.middleware.decisions`). The executor asks about one call per interrupt,
so both shapes carry one decision:

- execgraph's: ``"approve"``, ``"reject"``, or ``{"action": "approve" | "reject" | "edit",
  "reason": ..., "arguments": {...}, "approver": ...}``;
- HumanInTheLoopMiddleware's (what a ``create_agent`` client already sends):
  ``{"type": "approve"}``, ``{"type": "reject", "message": ...}``, ``{"type": "edit",
  "edited_action": {"name": <the same tool>, "args": {...}}}``, or a ``{"decisions":
  [one of these]}`` response holding exactly one.

Anything else (an edit naming another tool or without arguments, a ``respond``, several
decisions, other text) is refused with a :class:`UsageError` saying what to send. Nothing
of the refused answer is echoed back but its type name: it is a client's data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from execgraph.state.contracts import ApprovalDecision
from execgraph.state.errors import UsageError

__all__ = ["RESUME_VALUES", "parse_decision", "read_decision"]

RESUME_VALUES = (
    'Command(resume="approve"), Command(resume="reject"), Command(resume={"action": '
    '"approve" | "reject" | "edit", "reason": ..., "arguments": {...}}), or '
    'HumanInTheLoopMiddleware\'s Command(resume={"decisions": [{"type": "approve" | '
    '"reject" | "edit", "message": ..., "edited_action": {"name": <the same tool>, '
    '"args": {...}}}]}) (keyed by the interrupt id when several are pending)'
)

_HITL_KEYS = {"type", "message", "edited_action"}


def _refuse(why: str) -> UsageError:
    return UsageError(
        f"not an approval decision: {why}; nothing was decided and the run still waits. "
        f"Pass {RESUME_VALUES}"
    )


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _refuse(f"an edit needs {where} as an object, got {type(value).__name__}")
    if not all(isinstance(k, str) for k in value):
        raise _refuse(f"{where} must have text keys")
    return dict(value)


def _hitl(value: Mapping[str, Any], tool: str | None) -> ApprovalDecision:
    """One HumanInTheLoopMiddleware decision as execgraph's."""
    kind = value.get("type")
    if kind == "respond":
        raise _refuse("a respond decision is not taken: the call runs or is rejected")
    if kind not in ("approve", "reject", "edit"):
        raise _refuse('"type" must be "approve", "reject" or "edit"')
    if set(value) - _HITL_KEYS:
        raise _refuse(f"a decision has only the keys {', '.join(sorted(_HITL_KEYS))}")
    message = value.get("message", "")
    if not isinstance(message, str):
        raise _refuse("a decision's message must be text")
    if kind != "edit":
        return ApprovalDecision(action=kind, reason=message)
    action = value.get("edited_action")
    if not isinstance(action, Mapping):
        raise _refuse('an edit needs "edited_action": {"name": ..., "args": {...}}')
    name = action.get("name")
    if tool is not None and name is not None and name != tool:
        raise _refuse(f"an edit may change the arguments of {tool!r}, not the tool")
    args = _arguments(action.get("args"), '"edited_action.args"')
    return ApprovalDecision(action="edit", arguments=args, reason=message)


def read_decision(value: Any, tool: str | None = None) -> ApprovalDecision:
    """The decision ``value`` says about a call of ``tool`` (None: the tool is not known
    here, so an edit is not checked against it).

    Raises:
        UsageError: ``value`` is no decision of either shape; its message says why and what
            to send. (A ``ValueError`` too, so a pydantic validator may raise it.)
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
        if len(value) != 1 or not isinstance(decisions, list) or len(decisions) != 1:
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


def parse_decision(value: Any, tool: str | None = None) -> ApprovalDecision:
    """Read a resume value inside the run; anything malformed is a rejection (fail
    closed). Callers check answers before the run resumes
    (:func:`~.stages.approval.check_resume`, or an interrupt's ``response_schema``), so a
    malformed one normally never gets here."""
    try:
        return read_decision(value, tool)
    except UsageError:
        return ApprovalDecision(action="reject", reason="malformed approval decision")
