"""Hybrid: fixed phases with a dynamic loop inside evidence collection.

scope → collect (ReAct over read-only tools) → analyze (write the deliverable) → publish
(irreversible tools, behind a fixed approval node) → accept (the model states the result,
the verifier judges it in ``verify_finish``). Which tools a phase may use follows their
effect class, so no phase can reach past its purpose. A result the verifier rejects sends
the run back to collect for more evidence; a publish the person rejects ends the run
without publishing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.approval_gate import approval_tokens
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import queue_calls, tool_calls
from execgraph.nodes.verify import evaluate, is_terminal, stop_update
from execgraph.state.contracts import RunStatus, TaskContract
from execgraph.state.schema import RunState
from execgraph.state.updates import merge

__all__ = [
    "PHASE_INSTRUCTIONS",
    "approve_publish",
    "phase_tools",
    "reopen",
    "route_phase",
    "route_phase_decision",
    "scope",
]

PHASE_INSTRUCTIONS = {
    "collect": "Phase COLLECT: gather evidence with the read-only tools. Call finish (with a "
    "short summary of what you found) when you have enough to write the deliverable.",
    "analyze": "Phase ANALYZE: write the deliverable from the evidence collected, with the "
    "write tools. Call finish when it is written.",
    "publish": "Phase PUBLISH: publish the deliverable if the task asks for it (a person "
    "approves first); otherwise call finish.",
    "accept": "Phase ACCEPT: state the final result with finish.",
}


def phase_tools(deps: RunDeps, effect: str) -> tuple[str, ...]:
    """Names of the registered tools of one effect class."""
    return tuple(s.name for s in deps.executor.registry.latest() if s.effect == effect)


def scope(state: RunState) -> dict[str, Any]:
    """Open the fixed phase sequence at collect."""
    return {"phase": "collect", "decisions": []}


def route_phase_decision(state: Mapping[str, Any]) -> str:
    """Inside a phase: actions go to the executor (publish via approval), else the next
    phase; an abort or a stopped run goes straight to the final verifier."""
    if is_terminal(state):
        return "verify_finish"
    phase = str(state.get("phase"))
    kinds = {d["kind"] for d in state.get("decisions") or []}
    if "abort" in kinds:
        return "verify_finish"
    if "tool_call" in kinds:
        return "approve" if phase == "publish" else "dispatch"
    return {"collect": "analyze", "analyze": "publish", "publish": "accept"}.get(phase, "accept")


def route_phase(state: Mapping[str, Any]) -> str:
    """After a tool turn: stay in collect/analyze, leave publish for accept; END if stopped."""
    if is_terminal(state):
        return "end"
    return {"collect": "collect", "analyze": "analyze"}.get(str(state.get("phase")), "accept")


def approve_publish(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """The fixed approval node: a person approves each exact publish call, or none run.

    Approval yields signed single-use tokens bound to each call's tool version and
    normalized arguments, so the executor runs exactly what was shown and does not ask twice.
    """
    contract = TaskContract.model_validate(state["contract"])
    calls = tool_calls(state)
    turn_id = f"t{state.get('turn', 0)}"
    tokens, calls, answer = approval_tokens(state, deps, contract, calls, turn_id)
    if answer != "approve":
        passed, _ = evaluate(contract, state, deps)
        status = RunStatus.PARTIAL if passed else RunStatus.FAILED
        return stop_update(state, contract, deps, status, "a person rejected publishing")
    queued = queue_calls(
        state,
        deps,
        calls,
        turn_id,
        f"{turn_id}:publish",
        tokens=tokens,
        allowed=state.get("offered"),
    )
    return merge([queued, {"phase": "publish"}])


def reopen(state: RunState) -> dict[str, Any]:
    """The verifier rejected the result: back to collect for the missing evidence."""
    return {"phase": "collect", "decisions": []}
