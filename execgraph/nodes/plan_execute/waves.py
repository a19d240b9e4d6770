"""The ``schedule`` node: the plan's ready steps run as one wave.

A step is ready when it has not run and every step it depends on is done. The ready steps
are queued together as one batch (the executor runs them side by side, one ``Send``
each), so independent steps never wait for each other; the wave's budget is reserved
for all of its calls or for none. The next wave is scheduled only after the triggers
were checked on this one's results (:mod:`.replan`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import queue_calls
from execgraph.nodes.plan_execute.steps import step_status
from execgraph.state.contracts import Decision, DecisionKind
from execgraph.state.schema import RunState

__all__ = ["schedule"]


def schedule(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Queue every ready step (all dependencies done) as one parallel batch."""
    results = state.get("results") or {}
    current = state.get("plan") or {"version": 0, "steps": []}
    steps = current["steps"]
    status = {s["id"]: step_status(s, results) for s in steps}
    ready = [
        s
        for s in steps
        if status[s["id"]] == "pending" and all(status.get(d) == "done" for d in s["depends_on"])
    ]
    version = current["version"]
    calls = [
        Decision(
            decision_id=f"{s['call_id']}.d",
            # a step the model asked a person to approve first is asked about
            kind=DecisionKind.TOOL_CALL
            if s.get("approval_asked") is None
            else DecisionKind.REQUEST_APPROVAL,
            content=s.get("approval_asked") or "",
            tool_name=s["tool"],
            arguments=s["arguments"],
            call_id=s["call_id"],
            tool_call_id=s.get("tool_call_id"),  # a direct call's: its result answers it
        )
        for s in ready
    ]
    if not calls:  # an empty plan (tools off): nothing to run, on to the answer
        return {"pending": []}
    charge_id = f"p{version}:" + "+".join(s["id"] for s in ready)
    steps = {s["call_id"]: s["id"] for s in ready}
    # With tools off no step may run, whatever the plan says: the executor refuses it.
    allowed: list[str] | None = None if deps.tools_enabled else []
    return queue_calls(state, deps, calls, f"p{version}", charge_id, steps=steps, allowed=allowed)
