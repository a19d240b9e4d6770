"""The plan as the model submits it, and as the runtime accepts it.

A plan reaches the state only once it is checked here: the ``submit_plan`` arguments
parse into steps, the step ids are unique and new, every dependency names a known step
and the steps form a DAG. What fails a check is a message for the model to repair, never
a plan half taken. A step's status is read from its call's result, never stored beside
it, so the plan and the results cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from execgraph.nodes.executor import schema_message
from execgraph.nodes.model.call import unstorable

__all__ = ["NO_TOOLS_PLAN_SCHEMA", "PLAN_SCHEMA", "PlanStep", "parse_plan", "step_status"]


class PlanStep(BaseModel):
    """One step of a plan."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=40)
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    success: str | None = None
    approval_asked: str | None = Field(
        default=None,
        description="Set to why a person should approve this step before it runs, when "
        "you are not sure the user wants it done; leave out otherwise.",
    )


class _Submitted(BaseModel):
    model_config = ConfigDict(extra="ignore")

    steps: list[PlanStep] = Field(min_length=1)


PLAN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Submit the plan: tool steps with dependencies (a DAG). Steps whose "
        "dependencies are done run in parallel.",
        "parameters": _Submitted.model_json_schema(),
    },
}


NO_TOOLS_PLAN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Tools are off for this run: submit an empty plan (no steps); the "
        "answer step follows, where you answer from what you know.",
        "parameters": {
            "type": "object",
            "properties": {"steps": {"type": "array", "maxItems": 0, "items": {}}},
            "required": ["steps"],
        },
    },
}
"""``submit_plan`` as offered with tools off (``RunDeps.tools_enabled``): no step may be
planned, since every step is a tool call."""


def parse_plan(
    ai: AIMessage, done: set[str], *, tools_enabled: bool = True
) -> tuple[list[PlanStep] | None, str | None]:
    """Steps from a ``submit_plan`` call, checked to form a DAG over known step ids.

    With ``tools_enabled`` False only the empty plan is accepted: a step naming a tool is
    refused as not offered, for the model to repair.
    """
    if ai.invalid_tool_calls:
        return None, "the submit_plan arguments were not valid JSON"
    calls = [c for c in ai.tool_calls if c["name"] == "submit_plan"]
    if len(calls) != 1:
        return None, "call submit_plan exactly once"
    if unstorable(calls[0]["args"]):
        return None, "argument numbers must fit in 64 bits"
    if not tools_enabled:
        return _no_tools_plan(calls[0]["args"])
    try:
        steps = _Submitted.model_validate(calls[0]["args"]).steps
    except ValidationError as exc:
        return None, f"the plan is malformed: {schema_message(exc)}"
    ids = [s.id for s in steps]
    if len(set(ids)) != len(ids) or set(ids) & done:
        return None, "step ids must be unique and must not reuse finished steps' ids"
    known = set(ids) | done
    for step in steps:
        if missing := set(step.depends_on) - known:
            return None, f"step {step.id} depends on unknown steps {sorted(missing)}"
    order: list[str] = []
    pending = {s.id: set(s.depends_on) - done for s in steps}
    while pending:
        ready = [i for i, deps in pending.items() if not deps]
        if not ready:
            return None, "the plan has a dependency cycle"
        for i in ready:
            order.append(i)
            del pending[i]
        for deps in pending.values():
            deps.difference_update(ready)
    return steps, None


def _no_tools_plan(args: Mapping[str, Any]) -> tuple[list[PlanStep] | None, str | None]:
    steps = args.get("steps")
    if steps == []:
        return [], None
    if not isinstance(steps, list):
        return None, "the plan is malformed: steps must be a list (empty: tools are off)"
    first = steps[0] if isinstance(steps[0], Mapping) else {}
    named = f"step {first.get('id')!r} names the tool {first.get('tool')!r}, which"
    return None, (
        f"{named if first else 'every step names a tool, and a tool'} is not offered: tools "
        "are off for this run; call submit_plan with no steps and answer from what you know"
    )


def step_status(step: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """``pending``, ``done`` or ``failed``, read from the step's result."""
    result = results.get(step["call_id"])
    if result is None:
        return "pending"
    return "done" if result.get("outcome") == "succeeded" else "failed"
