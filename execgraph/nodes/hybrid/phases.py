"""Hybrid's phases: which tools each may use, what it asks, and where its finish leads.

Which tools a phase may use follows their effect class (:data:`PHASES`), so no phase can
reach past its purpose. A phase none of whose tools the task may use (no write tool, no
irreversible one) is skipped: the model is never asked to close a phase it cannot act in.
The finish of the last phase that has tools is the run's result, judged by the verifier
at once; the accept phase is asked only after a publish ran, to state the result with
what it published. A result the verifier rejects sends the run back to its first phase
for more evidence (``reopen``).

Publish calls pass the fixed approval node (:mod:`.approval`). While it waits for a
person, the run's status is ``WAITING``: :func:`phase_step` sets it, since an interrupt
discards the update of the node that raises it.

A model that does not follow the phases is still driven through them. A reply whose
calls all name tools of one later phase (an ordinary tool-calling model sending the email
while "collecting") closes the phases before it and runs in that phase, on that phase's
path (a publish call through the approval node), as if the model had called ``finish``
first. A reply that answers without tools, in a task without success checks, is the
run's answer and goes to the verifier at once (:mod:`execgraph.nodes.verify`); with
checks, it closes the phase as ``finish`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.asked_approval import REQUEST_APPROVAL
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import ACTIONS, tool_calls
from execgraph.nodes.verify import is_terminal
from execgraph.state.contracts import DecisionKind, RunStatus, TaskContract
from execgraph.state.schema import RunState

__all__ = [
    "PHASES",
    "PHASE_EXITS",
    "PHASE_INSTRUCTIONS",
    "accept",
    "active_phases",
    "phase_instruction",
    "phase_step",
    "phase_tools",
    "reopen",
    "route_opened",
    "route_phase",
    "route_phase_decision",
    "scope",
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


def scope(state: RunState, *, deps: RunDeps) -> dict[str, Any]:
    """Open the sequence at its first phase with tools; with none at all, at accept."""
    active = active_phases(state, deps)
    return {"phase": active[0] if active else "accept", "decisions": []}


def reopen(state: RunState, *, deps: RunDeps) -> dict[str, Any]:
    """After the verifier rejected the result: back to the first phase with tools, for
    more evidence (as :func:`scope` opened it)."""
    return scope(state, deps=deps)


def route_opened(state: Mapping[str, Any]) -> str:
    """The phase :func:`scope` or :func:`reopen` opened."""
    return str(state.get("phase"))


def _later_phase(
    state: Mapping[str, Any], deps: RunDeps, phase: str, tools: list[str]
) -> str | None:
    """The later active phase every one of ``tools`` belongs to, if there is one."""
    effects = {s.name: s.effect for s in deps.executor.registry.latest()}
    owners = {p for p, effect in PHASES.items() for t in tools if effects.get(t) == effect}
    if len(owners) != 1 or not all(t in effects for t in tools):
        return None
    [owner] = owners
    later = list(PHASES).index(owner) > list(PHASES).index(phase)
    return owner if later and owner in active_phases(state, deps) else None


def _closed(
    state: Mapping[str, Any], deps: RunDeps, phase: str, update: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The runtime's answer to a ``finish`` that closes ``phase`` for the next one (a
    ``finish`` of the last phase is the verifier's to answer), or None."""
    finish = next((d for d in update.get("decisions") or [] if d["kind"] == "finish"), None)
    after = _after(state, deps, phase)
    if finish is None or after is None:
        return None
    turn = int(update.get("turn", 0))
    text = f"phase {phase} closed; next: {after}"
    return {
        "id": f"t{turn}:phase",
        "turn": turn,
        "text": text,
        "tool_call_id": finish["tool_call_id"],
    }


def phase_step(
    state: RunState, config: RunnableConfig, *, deps: RunDeps, phase: str
) -> dict[str, Any]:
    """One model turn inside ``phase``, offered the phase's tools, finish and abort.

    A reply whose calls all belong to a later phase moves the run there (see the module
    docstring). Publish calls go to the fixed approval node next, which pauses for a
    person: the run is ``WAITING`` from here (an interrupt discards the update of the
    node that raises it, so the status is set by the node before).
    """
    update = decide(
        state,
        config,
        deps=deps,
        tools=phase_tools(deps, PHASES[phase]),
        phase=phase,
        controls=("finish", "abort", REQUEST_APPROVAL),
        instruction=lambda view, run_deps: phase_instruction(view, run_deps, phase=phase),
        final=_after(state, deps, phase) is None,  # else its finish opens the next phase
    )
    if is_terminal(update):
        return update
    closed = _closed(state, deps, phase, update)
    if closed is not None:
        return {**update, "feedback": [closed]}
    calls = tool_calls(update)  # type: ignore[arg-type]
    if not calls:
        return update
    later = _later_phase(state, deps, phase, [c.tool_name or "" for c in calls])
    if later is not None and deps.tools_enabled:
        allowed = set(TaskContract.model_validate(state["contract"]).allowed_actions)
        offered = [t for t in phase_tools(deps, PHASES[later]) if t in allowed]
        update = {**update, "phase": later, "offered": offered}
    if update.get("phase") == "publish":
        update["status"] = RunStatus.WAITING.value
    return update


def accept(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """After a publish: one model call, offered only finish, to state the final result."""
    return decide(
        state,
        config,
        deps=deps,
        tools=(),
        controls=("finish",),
        instruction=PHASE_INSTRUCTIONS["accept"],
    )


PHASE_EXITS: dict[str, list[str]] = {
    "collect": ["dispatch", "approve", "analyze", "publish", "verify_finish"],
    "analyze": ["dispatch", "approve", "publish", "verify_finish"],
    "publish": ["approve", "verify_finish"],
}
"""Where :func:`route_phase_decision` may send each phase: its tool calls on (publish's
through ``approve``, also a reply of an earlier phase that moved to publish), its finish
to a later phase with tools, or to the verifier."""


def route_phase_decision(state: Mapping[str, Any], *, deps: RunDeps) -> str:
    """Inside a phase: actions go to the executor (publish via approval); a finish goes to
    the next phase with tools, or is the result the verifier judges; a bare goal's answer
    (a reply without tools, no success checks), an abort or a stopped run goes straight
    to the final verifier."""
    if is_terminal(state):
        return "verify_finish"
    phase = str(state.get("phase"))
    kinds = {d["kind"] for d in state.get("decisions") or []}
    if "abort" in kinds:
        return "verify_finish"
    if kinds & set(ACTIONS):
        return "approve" if phase == "publish" else "dispatch"
    bare = not (state.get("contract") or {}).get("success_checks")
    if bare and DecisionKind.ANSWER.value in kinds and deps.answer_format is None:
        return "verify_finish"  # (a structured answer comes only from the last finish)
    return _after(state, deps, phase) or "verify_finish"


def route_phase(state: Mapping[str, Any]) -> str:
    """After a tool turn: stay in collect/analyze, leave publish for accept; END if stopped."""
    if is_terminal(state):
        return "end"
    return {"collect": "collect", "analyze": "analyze"}.get(str(state.get("phase")), "accept")
