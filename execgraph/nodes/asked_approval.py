"""``request_approval``: the model asks a person to approve one call before it runs.

A careful model may not be sure the user wants an action its policy would allow without
asking (an email to a whole list, a file overwritten). It then calls the control tool
``request_approval(tool, args, reason)`` instead of the tool. That is a decision of kind
``request_approval``: a candidate action like a tool call, with one difference — the
executor asks a person about it whatever the policy says
(:func:`~execgraph.nodes.executor.stages.policy.asked_first`).

Everything else is the executor's ordinary path for a call: the tool is resolved, its
arguments normalized and validated, the policy applied (a deny stays a deny); the person
is shown the usual approval request — bound to the tool version, the normalized arguments
and their targets' state — with the model's reason; an approved call runs once, with no
second question; a rejected one is a person's rejection, which later calls are held to
(:mod:`execgraph.nodes.executor.refusals`). The call's result answers the model's
``request_approval`` call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.state.contracts import Decision, DecisionKind

__all__ = ["REQUEST_APPROVAL", "approval_decision", "request_approval_schema"]

REQUEST_APPROVAL = "request_approval"
"""The control tool's name."""


def request_approval_schema(tools: Sequence[str]) -> dict[str, Any]:
    """The ``request_approval`` control tool, for a turn that offers ``tools``."""
    return {
        "type": "function",
        "function": {
            "name": REQUEST_APPROVAL,
            "description": (
                "Ask a person to approve one call of a tool before it runs, when you are "
                "not sure the user wants it done. If they approve, the call runs once and "
                "its result answers this call; if they reject it, it does not run."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "enum": list(tools)},
                    "args": {"type": "object", "description": "The tool's arguments."},
                    "reason": {"type": "string", "description": "Why a person should decide."},
                },
                "required": ["tool", "args", "reason"],
            },
        },
    }


def _arguments(raw: Any) -> dict[str, Any] | None:
    """The proposed call's arguments: an object, or an object's JSON text (some models
    pass a nested object as a string); None when they are neither."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if isinstance(raw, Mapping) and all(isinstance(k, str) for k in raw):
        return dict(raw)
    return None


def approval_decision(
    args: Mapping[str, Any], decision_id: str, call_id: str, tool_call_id: str
) -> Decision | str:
    """The ``request_approval`` decision of a call with ``args``, or the problem the model
    must repair (no tool named, arguments that are not an object)."""
    tool = args.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        return "request_approval needs the name of the tool to call in 'tool'"
    if tool == REQUEST_APPROVAL:
        return "request_approval names the tool to call, not request_approval itself"
    arguments = _arguments(args.get("args"))
    if arguments is None:
        return f"request_approval of {tool!r}: 'args' must be a JSON object of its arguments"
    reason = args.get("reason")
    return Decision(
        decision_id=decision_id,
        kind=DecisionKind.REQUEST_APPROVAL,
        tool_name=tool,
        arguments=arguments,
        call_id=call_id,
        tool_call_id=tool_call_id,
        content=reason if isinstance(reason, str) else "",
    )
