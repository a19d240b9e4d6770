"""A plan from a model that does not plan: direct tool calls, or a plain answer.

Plan-and-execute asks for a plan with ``submit_plan`` and for the answer with ``finish``.
An ordinary tool-calling model — one written for ``create_agent`` — calls the task's
tools directly, and answers in text. It still drives the graph:

* calls of tools (not control tools; ``request_approval`` is a call of its tool, asked
  about first) where a plan is asked for (``plan``) or where the
  answer is (``respond``) are the plan's next wave: one step each, no dependencies,
  answering the model's own call ids (their ``ToolMessage``s follow its reply), in a new
  plan version that keeps every step before it. Calls are not a replan: they count
  against no replan limit.
* a reply without tool calls where a plan is asked for is the model's answer: the
  verifier judges it (``verify_finish``) as it judges ``finish`` — a bare goal's chat
  turn ends there in one model call.

A step runs through the executor as any plan step does: validated, authorized (a call of a
tool the task does not allow, or with tools off, is refused there), recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.nodes.budget import used
from execgraph.state.contracts import BudgetKind, Decision, DecisionKind

__all__ = ["DIRECT", "direct_steps", "extended_plan"]

DIRECT = "the model called tools directly"
"""Why a plan version made of direct calls was made (its ``why``)."""


def direct_steps(calls: Sequence[Decision], version: int) -> list[dict[str, Any]]:
    """One plan step per tool-call decision, for plan ``version`` (step ids ``v<n>.<i>``)."""
    steps: list[dict[str, Any]] = []
    actions = (DecisionKind.TOOL_CALL, DecisionKind.REQUEST_APPROVAL)
    for index, call in enumerate(c for c in calls if c.kind in actions):
        step_id = f"v{version}.{index}"
        asked = call.content if call.kind is DecisionKind.REQUEST_APPROVAL else None
        steps.append(
            {
                "id": step_id,
                "tool": call.tool_name or "",
                "arguments": dict(call.arguments),
                "depends_on": [],
                "success": None,
                "call_id": f"p{version}.{step_id}",
                "tool_call_id": call.tool_call_id,
                **({"approval_asked": asked} if asked is not None else {}),
            }
        )
    return steps


def extended_plan(state: Mapping[str, Any], calls: Sequence[Decision]) -> dict[str, Any]:
    """The plan's next version: every step so far, then ``calls`` as its next wave."""
    old = state.get("plan") or {"version": 0, "steps": [], "replans": -1}
    version = int(old.get("version", 0)) + 1
    added = direct_steps(calls, version)
    return {
        "version": version,
        "steps": [*old.get("steps", []), *added],
        "replans": max(int(old.get("replans", -1)), 0),
        "why": DIRECT,
        "answered": list(old.get("answered", [])),
        "planned_tool_calls": len(added),
        "tool_calls_before": used(state).get(BudgetKind.TOOL_CALLS.value, 0),
    }
