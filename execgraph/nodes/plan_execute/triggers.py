"""Replanning triggers: the causes the run's state shows for a new plan.

A plan is replaced only on a trigger, and a trigger fires once per cause. Each new plan
records the causes open when it was made (``answered``): it was made knowing them, so
only a cause that appears later (a new conflict, a new step's gap) replans again, and the
new plan's own evidence is what the verifier then judges. The triggers, checked after
every wave (:func:`causes`):

* *dependency failed*: a step's call failed; the new plan drops it.
* *environment changed*: the world moved under the plan. Either a step observed a source
  at an older ``version`` and value than a later observation (not our own write) brought
  into evidence — the done steps that saw the old state and touched nothing are dropped and
  re-planned (:func:`stale_steps`) — or a step's result reports that its target changed
  (a ``StateGuardMismatch``).
* *evidence gap*: a done step did not produce the evidence kind its criterion names.
* *contrary evidence*: two observations of one source at one version disagree (the
  evidence reducer flags them).
* *budget deviation*: the plan's steps spent far more tool calls than it planned; spending
  is counted from the moment this version was made, not over the whole run.

The user changing the task, the verifier rejecting the answer and the model asking for a
new plan replan too; those are decided where they happen (:mod:`.replan`).

A trigger's message reaches the planner as the runtime's own instruction, outside the
untrusted wrapper, so it is made of runtime words only: step ids, tool names, error types,
versions and counts. What a tool said (a source id, an error's message, a value) is named
by the step that observed it; the planner reads it in that step's result, inside the
wrapper.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from execgraph.nodes.budget import used
from execgraph.nodes.plan_execute.steps import step_status
from execgraph.state.contracts import BudgetKind

__all__ = ["causes", "open_trigger", "stale_steps", "staleness"]


def _touched(result: Mapping[str, Any]) -> bool:
    """True when a call committed a side effect, or nobody can tell that it did not."""
    return (result.get("side_effect") or {}).get("committed", False) is not False


def _changed_by_others(results: Mapping[str, Any], source: str, version: int) -> bool:
    """True when ``source`` at ``version`` was observed, and by no call of ours that wrote."""
    makers = [
        r
        for r in results.values()
        if any(
            e.get("source_id") == source and e.get("version", 1) == version
            for e in r.get("evidence") or []
        )
    ]
    return bool(makers) and not any(_touched(r) for r in makers)


def stale_steps(state: Mapping[str, Any]) -> dict[str, tuple[str, int, int]]:
    """Done steps that observed a source the world has since changed:
    step id -> (source, version seen, version now).

    Changed means a newer version with another value: many tools stamp every observation
    with the time, so a newer version alone is a re-read, not a change. A step's arguments
    are fixed when the plan is made, so what it depends on is what it observed. A step
    that touched the world is never stale: its effect stays on record.
    """
    results = state.get("results") or {}
    evidence = state.get("evidence") or {}
    stale: dict[str, tuple[str, int, int]] = {}
    for step in (state.get("plan") or {}).get("steps", []):
        result = results.get(step["call_id"])
        if step_status(step, results) != "done" or result is None or _touched(result):
            continue
        for item in result.get("evidence") or []:
            source = str(item.get("source_id"))
            current = evidence.get(source)
            if current is None:
                continue
            old, new = int(item.get("version", 1)), int(current.get("version", 1))
            moved = new > old and current.get("value") != item.get("value")
            if moved and _changed_by_others(results, source, new):
                stale[step["id"]] = (source, old, new)
                break
    return stale


def staleness(old: int, new: int) -> str:
    """What a stale step saw, for the planner and the trigger message (never the source's
    id: a tool wrote it)."""
    return f"observed a source at version {old}; it has changed since (version {new})"


_ERROR_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _failure(step: Mapping[str, Any], error: Mapping[str, Any]) -> str:
    """A failed step in runtime words: its id, its tool, the runtime's error type."""
    kind = str(error.get("type") or "")
    typed = f" with {kind}" if _ERROR_TYPE.fullmatch(kind) else ""
    return f"step {step['id']} ({step['tool']}) failed{typed}; its result says why"


def _observers(steps: list[Mapping[str, Any]], results: Mapping[str, Any], source: str) -> str:
    """The steps whose results observed ``source``, as runtime words."""
    ids = [
        str(s["id"])
        for s in steps
        if any(
            e.get("source_id") == source
            for e in (results.get(s["call_id"]) or {}).get("evidence") or []
        )
    ]
    return f"observed by steps {', '.join(ids)}" if ids else "observed outside this plan's steps"


def causes(state: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every replan cause the state shows now, as (key, message), most urgent first.

    The key names the cause itself (a call, a source at a version, a plan version), so
    a plan can record which causes it answered.
    """
    results = state.get("results") or {}
    current = state.get("plan") or {"version": 0, "steps": []}
    steps = current["steps"]
    out: list[tuple[str, str]] = []
    for step in steps:
        if step_status(step, results) == "failed":
            error = results[step["call_id"]].get("error") or {}
            text = _failure(step, error)
            if error.get("type") == "StateGuardMismatch":
                out.append((f"failed:{step['call_id']}", f"environment changed: {text}"))
            else:
                out.append((f"failed:{step['call_id']}", f"dependency failed: {text}"))
    for step_id, (source, old, new) in stale_steps(state).items():
        message = f"environment changed: step {step_id} {staleness(old, new)}"
        out.append((f"changed:{source}@{new}", message))
    evidence = state.get("evidence") or {}
    for step in steps:
        if step.get("success") and step_status(step, results) == "done":
            kinds = {e.get("kind") for e in results[step["call_id"]].get("evidence", [])}
            if step["success"] not in kinds and not any(
                e.get("kind") == step["success"] for e in evidence.values()
            ):
                message = f"evidence gap: step {step['id']} produced no {step['success']} evidence"
                out.append((f"gap:{step['call_id']}:{step['success']}", message))
    for source, item in evidence.items():
        if item.get("conflict"):
            values = sorted({str(v) for v in [item.get("value"), *item.get("conflicts", [])]})
            digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]
            key = f"conflict:{source}@{item.get('version', 1)}:{digest}"  # values may be long
            message = (
                f"contrary evidence: {len(values)} observations of one source at version "
                f"{item.get('version', 1)} disagree ({_observers(steps, results, source)})"
            )
            out.append((key, message))
    planned = int(current.get("planned_tool_calls", len(steps)))
    spent = used(state).get(BudgetKind.TOOL_CALLS.value, 0) - current.get("tool_calls_before", 0)
    if spent > max(planned * 1.5, planned + 2):
        message = f"budget deviation: {spent:g} tool calls against {planned} planned"
        out.append((f"budget:v{current['version']}", message))
    return out


def open_trigger(state: Mapping[str, Any]) -> str | None:
    """The first cause no plan has answered yet, or None."""
    answered = set((state.get("plan") or {}).get("answered", []))
    return next((m for k, m in causes(state) if k not in answered), None)
