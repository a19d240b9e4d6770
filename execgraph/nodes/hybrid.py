"""Hybrid: fixed phases with a dynamic loop inside evidence collection.

scope → collect (ReAct over read-only tools) → analyze (write the deliverable) → publish
(irreversible tools, behind a fixed approval node) → accept (the model states the result,
the verifier judges it in ``verify_finish``). Which tools a phase may use follows their
effect class, so no phase can reach past its purpose.

A phase none of whose tools the task may use (no write tool, no irreversible one) is
skipped: the model is never asked to close a phase it cannot act in. The finish of the
last phase that has tools is the run's result, judged by the verifier at once; the accept
phase is asked only after a publish ran, to state the result with what it published. A
result the verifier rejects sends the run back to its first phase for more evidence.

Each publish call is approved or rejected on its own (:mod:`execgraph.nodes.approval_gate`):
approved calls run, a rejected one ends ``failed`` at phase ``policy`` and the model sees
it, as under the executor's own approvals. While the approval node waits for a person, the
run's status is ``WAITING``; a run cancelled meanwhile publishes nothing. With tools off
(``RunDeps.tools_enabled``) nothing was offered, so no person is asked: the executor
refuses each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.approval_gate import GateAnswers, approval_tokens, rejected_results
from execgraph.nodes.cancel import cancel_requested
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import queue_calls, tool_calls
from execgraph.nodes.verify import is_terminal
from execgraph.state.contracts import RunStatus, TaskContract
from execgraph.state.schema import RunState
from execgraph.state.updates import merge

__all__ = [
    "PHASES",
    "PHASE_INSTRUCTIONS",
    "active_phases",
    "approve_publish",
    "open_phases",
    "phase_instruction",
    "phase_step",
    "phase_tools",
    "route_opened",
    "route_phase",
    "route_phase_decision",
]

PHASES: dict[str, str] = {"collect": "read", "analyze": "write", "publish": "irreversible"}
"""The phases that act, in order, with the effect class of the tools each may use."""

PHASE_INSTRUCTIONS = {
    "collect": "Phase COLLECT: gather evidence with the read-only tools.",
    "analyze": "Phase ANALYZE: write the deliverable from the evidence collected, with the "
    "write tools.",
    "publish": "Phase PUBLISH: publish the deliverable if the task asks for it (a person "
    "approves first).",
    "accept": "Phase ACCEPT: state the final result with finish.",
}
_MORE = {
    "collect": "Call finish (with a short summary of what you found) when you have enough "
    "to write the deliverable.",
    "analyze": "Call finish when it is written.",
}
_LAST = (
    "This is the last phase: when the task is done, call finish with the final result "
    "(it is checked against the task's success checks)."
)


def phase_tools(deps: RunDeps, effect: str) -> tuple[str, ...]:
    """Names of the registered tools of one effect class."""
    return tuple(s.name for s in deps.executor.registry.latest() if s.effect == effect)


def active_phases(state: Mapping[str, Any], deps: RunDeps) -> list[str]:
    """The acting phases, in order, that have a tool the task may use."""
    allowed = set(TaskContract.model_validate(state["contract"]).allowed_actions)
    return [p for p, effect in PHASES.items() if allowed & set(phase_tools(deps, effect))]


def _after(state: Mapping[str, Any], deps: RunDeps, phase: str) -> str | None:
    """The next phase with tools after ``phase``, or None when ``phase`` is the last."""
    active = active_phases(state, deps)
    later = [p for p in active if list(PHASES).index(p) > list(PHASES).index(phase)]
    return later[0] if later else None


def phase_instruction(state: Mapping[str, Any], deps: RunDeps, *, phase: str) -> str:
    """The phase's instruction, and what its finish means: the way on, or the result."""
    if phase in _MORE and _after(state, deps, phase) is not None:
        return f"{PHASE_INSTRUCTIONS[phase]} {_MORE[phase]}"
    return f"{PHASE_INSTRUCTIONS[phase]} {_LAST}"


def open_phases(state: RunState, *, deps: RunDeps) -> dict[str, Any]:
    """Open (or, after a rejected result, reopen) the sequence at its first phase with
    tools; with none at all, at accept."""
    active = active_phases(state, deps)
    return {"phase": active[0] if active else "accept", "decisions": []}


def route_opened(state: Mapping[str, Any]) -> str:
    """The phase :func:`open_phases` opened."""
    return str(state.get("phase"))


def phase_step(
    state: RunState, config: RunnableConfig, *, deps: RunDeps, phase: str
) -> dict[str, Any]:
    """One model turn inside ``phase``, offered the phase's tools, finish and abort.

    Publish calls go to the fixed approval node next, which pauses for a person: the run
    is ``WAITING`` from here (an interrupt discards the update of the node that raises it,
    so the status is set by the node before).
    """
    update = decide(
        state,
        config,
        deps=deps,
        tools=phase_tools(deps, PHASES[phase]),
        phase=phase,
        controls=("finish", "abort"),
        instruction=lambda view, run_deps: phase_instruction(view, run_deps, phase=phase),
    )
    if phase == "publish" and tool_calls(update) and not is_terminal(update):  # type: ignore[arg-type]
        update["status"] = RunStatus.WAITING.value
    return update


def route_phase_decision(state: Mapping[str, Any], *, deps: RunDeps) -> str:
    """Inside a phase: actions go to the executor (publish via approval); a finish goes to
    the next phase with tools, or is the result the verifier judges; an abort or a
    stopped run goes straight to the final verifier."""
    if is_terminal(state):
        return "verify_finish"
    phase = str(state.get("phase"))
    kinds = {d["kind"] for d in state.get("decisions") or []}
    if "abort" in kinds:
        return "verify_finish"
    if "tool_call" in kinds:
        return "approve" if phase == "publish" else "dispatch"
    return _after(state, deps, phase) or "verify_finish"


def route_phase(state: Mapping[str, Any]) -> str:
    """After a tool turn: stay in collect/analyze, leave publish for accept; END if stopped."""
    if is_terminal(state):
        return "end"
    return {"collect": "collect", "analyze": "analyze"}.get(str(state.get("phase")), "accept")


def approve_publish(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """The fixed approval node: a person approves or rejects each exact publish call.

    Approval yields signed single-use tokens bound to each call's tool version and
    normalized arguments, so the executor runs exactly what was shown and does not ask
    twice. A rejected call is not run: its ``failed`` result goes to the model with the
    others'. A run cancelled before the node asks (or while it waits) runs none of them.
    """
    contract = TaskContract.model_validate(state["contract"])
    calls = tool_calls(state)
    turn_id = f"t{state.get('turn', 0)}"
    if not deps.tools_enabled:  # nothing was offered: no person is asked, the executor refuses
        refused = queue_calls(state, deps, calls, turn_id, f"{turn_id}:publish", allowed=[])
        return merge([refused, {"phase": "publish"}])
    if cancel_requested(deps.executor.store, contract.run_id):
        why = "was not run: the run was cancelled"
        answers = GateAnswers(rejected=[(c, f"{c.tool_name} {why}") for c in calls])
    else:
        answers = approval_tokens(state, deps, contract, calls, turn_id)
    refused = rejected_results(contract, answers.rejected, turn_id, deps)
    queued: dict[str, Any] = {"pending": [], "status": RunStatus.RUNNING.value}
    if answers.approved:
        queued = queue_calls(
            state,
            deps,
            answers.approved,
            turn_id,
            f"{turn_id}:publish",
            tokens=answers.tokens,
            allowed=state.get("offered"),
        )
    return merge([refused, queued, {"phase": "publish"}])
