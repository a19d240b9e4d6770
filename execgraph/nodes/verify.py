"""The verifier and stop controller: the only place a run becomes COMPLETED.

Every turn ends here. A cancel request (logged by anyone, from any process) stops the run
CANCELLED first. A model's ``finish`` or plain answer (a reply without tool calls) is a
candidate, judged on the run's record. Every judgement is logged as a ``verifier.verdict``
event with ``"gated": true``; with the gate off (``RunDeps.verifier_gate``, an ablation) a
finish is accepted unjudged, no check runs, and its verdict says ``"gated": false``. Then,
in order: abort, loop guard, budgets and deadline, and the task's stop conditions decide
whether the run stops (FAILED, BUDGET_EXHAUSTED with the confirmed partial result and the
open items) or goes on.

What an answer is judged on:

* A task with success checks: every check must hold over the run's whole record. Then
  the run is ``COMPLETED``; otherwise the answer is rejected, the reasons go back to the
  model, and the run goes on (the same answer rejected for the same reasons again is a
  turn without progress for the loop guard).
* A bare goal (no checks, e.g. ``{"messages": [...]}`` as with ``create_agent``): the
  answer ends the run, and the run's own actions are its checks
  (:mod:`execgraph.nodes.run_actions`). A reply that answers without tools (a chat turn),
  or after actions that all succeeded, is ``COMPLETED``. If an action the model asked for
  (a call of a tool that is not a declared read) never succeeded in this run (refused by
  a policy, rejected by a person, failed), the answer still ends the run, as ``PARTIAL``
  when some other tool succeeded and ``FAILED`` when none did; the verification lists
  what succeeded (``passed``) and each unmet action with why (``failed``), so a program
  that reads ``status`` is not told COMPLETED for a goal whose actions did not happen.

Statuses in short: ``COMPLETED`` (accepted on its checks, or a bare goal whose actions
all succeeded), ``PARTIAL`` (ended with some of what it needed: a bare goal with an unmet
action, a fixed workflow short of some checks), ``FAILED`` (aborted, refused at
admission, no progress, a stop condition, nothing it tried worked), ``BUDGET_EXHAUSTED``,
``CANCELLED``, and ``WAITING`` (paused for a person; not an end).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.answer_channel import output_sources
from execgraph.nodes.budget import exhausted
from execgraph.nodes.cancel import cancel_requested
from execgraph.nodes.checks import BUILTIN_CHECKS
from execgraph.nodes.conversation import closing
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.executor.recovery.tool_wait import cancelled_with_run
from execgraph.nodes.loop_guard import reply_progress
from execgraph.nodes.run_actions import met_actions, tool_bug, unmet_actions
from execgraph.nodes.run_input import run_seq
from execgraph.nodes.run_record import full_view
from execgraph.state.contracts import Decision, DecisionKind, RunStatus, TaskContract
from execgraph.state.errors.tool_bugs import bug_reason, mark_due
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.schema import RunState
from execgraph.state.updates import fold

__all__ = [
    "evaluate",
    "is_terminal",
    "route_verify",
    "stop_condition",
    "stop_update",
    "verify",
]


def is_terminal(state: Mapping[str, Any]) -> bool:
    """True once the run has a terminal status."""
    status = state.get("status")
    return status is not None and RunStatus(status).terminal


def evaluate(
    contract: TaskContract, view: Mapping[str, Any], deps: RunDeps
) -> tuple[list[str], list[str]]:
    """Success checks on ``view`` -> (passed descriptions, failure reasons).

    With no checks in the contract, the run's own actions are the checks: the tools it
    called that succeeded pass, each one that never did fails, but for a read
    (:mod:`execgraph.nodes.run_actions`). The checks see the run's whole record
    (:func:`execgraph.nodes.run_record.full_view`), not state's window.
    """
    view = full_view(view, contract.run_id, deps)
    if not contract.success_checks:
        reads = {s.name for s in deps.executor.registry.latest() if s.effect == "read"}
        return met_actions(view), unmet_actions(view, reads)
    passed, failed = [], []
    checks = {**BUILTIN_CHECKS, **deps.checks}
    for check in contract.success_checks:
        reason = checks[check.kind](check, view, contract)
        label = check.description or " ".join(
            str(part)
            for part in (check.kind, check.count, check.target, check.value)
            if part is not None and part != ""
        )
        if reason is None:
            passed.append(label)
        else:
            failed.append(reason)
    return passed, failed


def _confirmed(state: Mapping[str, Any]) -> list[str]:
    return [
        f"[{e.get('kind')}] {e.get('source_id')}: {str(e.get('value', ''))[:160]}"
        for e in (state.get("evidence") or {}).values()
    ]


def stop_update(
    state: Mapping[str, Any],
    contract: TaskContract,
    deps: RunDeps,
    status: RunStatus,
    reason: str,
    *,
    output: str | None = None,
    logged: Sequence[Event] = (),
) -> dict[str, Any]:
    """A terminal update: status, reason, the confirmed partial result and the open items,
    and the answers to the last reply's open calls
    (:func:`~execgraph.nodes.conversation.closing`).

    ``logged`` are events that come before ``run.finished`` (the verdict that ends the
    run): one flushed append writes them all, not one flush each."""
    view = full_view(state, contract.run_id, deps)
    open_items: list[str] = []
    if status is not RunStatus.COMPLETED:  # a completed run has no open items to list
        _, open_items = evaluate(contract, {**view, "output": output or state.get("output")}, deps)
    if output is None and status is not RunStatus.COMPLETED:
        confirmed = _confirmed(view)
        output = "Confirmed so far:\n" + ("\n".join(f"- {c}" for c in confirmed) or "- nothing")
        if open_items:
            output += "\nOpen:\n" + "\n".join(f"- {o}" for o in open_items)
    if status is RunStatus.CANCELLED:  # a tool stopped at its own question ends with the run
        cancelled_with_run(deps.executor.store, contract.run_id, reason)
    payload = {"status": status.value, "reason": reason}
    event = make_event(EventType.RUN_FINISHED, contract.run_id, seq=run_seq(state), payload=payload)
    deps.executor.store.append_events([*logged, event])
    update: dict[str, Any] = {
        "status": status.value,
        "output": output,
        "open_items": open_items,
        "events": {"recent": [event.event_id]},
    }
    answers = closing(state, deps.observation_chars, status, reason)
    if answers:
        update["messages"] = answers
    if status is not RunStatus.COMPLETED:
        update["error"] = {"type": status.value, "message": reason}
    return update


def _structured(decision: Decision, deps: RunDeps) -> Any:
    """The answer that ended the run as the graph's answer format's JSON data (None without
    one: a finish is made of the answer's fields only where the graph asks for them)."""
    if deps.answer_format is None or decision.kind is not DecisionKind.FINISH:
        return None
    return json.loads(decision.content)


def verify(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """Judge an answer (see the module docstring), then decide: stop, or go on."""
    if is_terminal(state):
        return {}
    contract = TaskContract.model_validate(state["contract"])
    if cancel_requested(deps.executor.store, contract.run_id):
        return stop_update(state, contract, deps, RunStatus.CANCELLED, "cancelled on request")
    decisions = [Decision.model_validate(d) for d in state.get("decisions") or []]
    turn = int(state.get("turn", 0))
    update: dict[str, Any] = {}
    judged: list[Event] = []  # verdicts of rejected finishes, logged with what follows
    for d in decisions:
        if d.kind in (DecisionKind.FINISH, DecisionKind.ANSWER):
            view = full_view(state, contract.run_id, deps)
            passed, failed = (
                evaluate(contract, {**view, "output": d.content}, deps)
                if deps.verifier_gate
                else ([], [])  # the gate is off: the finish stands unjudged
            )
            report: dict[str, Any] = {
                "turn": turn,
                "passed": passed,
                "failed": failed,
                "accepted": not failed,
            }
            if not deps.verifier_gate:  # state says so too; a judged report stays as it was
                report["gated"] = False
            verdict = make_event(
                EventType.VERIFIER_VERDICT,
                contract.run_id,
                turn_id=f"t{turn}",
                payload={**report, "gated": deps.verifier_gate},
            )
            if not failed or not contract.success_checks:
                # Accepted; or a bare goal's answer, which ends the run whatever its
                # actions came to: the status says what they came to.
                status, reason = RunStatus.COMPLETED, "verified"
                if failed:
                    status = RunStatus.PARTIAL if passed else RunStatus.FAILED
                    reason = "answered, but not every action succeeded: " + "; ".join(failed)
                done = stop_update(
                    view, contract, deps, status, reason, output=d.content, logged=[verdict]
                )
                recent = [verdict.event_id, *done["events"]["recent"]]
                sources = output_sources(
                    deps.executor.store, deps.executor.registry, contract.run_id, d.content
                )
                structured = _structured(d, deps)
                return {
                    **done,
                    "events": {"recent": recent},
                    "verification": report,
                    "output_sources": sources,
                    **({"structured_response": structured} if structured is not None else {}),
                }
            judged.append(verdict)
            update["events"] = {"recent": [verdict.event_id]}
            note = "finish rejected: " + "; ".join(failed)
            update["verification"] = report
            update["feedback"] = [
                {
                    "id": f"t{turn}:finish",
                    "turn": turn,
                    "text": note,
                    "tool_call_id": d.tool_call_id,
                }
            ]
            update["progress"] = reply_progress(
                state.get("progress"), d.content, failed, f"t{turn}:reply"
            )
        if d.kind is DecisionKind.ABORT:
            reason = f"aborted: {d.content}"
            return stop_update(state, contract, deps, RunStatus.FAILED, reason, logged=judged)
    now: Mapping[str, Any] = fold(state, update) if update else state
    halt = stop_condition(now, contract, deps, cancel_checked=True)
    if halt is not None:
        stopped = stop_update(now, contract, deps, *halt, logged=judged)
        rejected = update.get("events", {}).get("recent", [])
        recent = [*rejected, *stopped["events"]["recent"]]
        return {**update, **stopped, "events": {"recent": recent}}
    if judged:
        deps.executor.store.append_events(judged)
    return {**update, "decisions": [], "status": RunStatus.RUNNING.value}


def stop_condition(
    state: Mapping[str, Any],
    contract: TaskContract,
    deps: RunDeps,
    *,
    cancel_checked: bool = False,
) -> tuple[RunStatus, str] | None:
    """Why the run must stop now (cancel, loop guard, budgets, deadline), or None.

    With ``deps.loop_guard`` off, turns without progress never stop the run here; the
    budgets and the deadline still do.

    One predicate for the verifier and for a turn deciding whether to ask the model at all,
    so the two can never disagree.
    """
    if not cancel_checked and cancel_requested(deps.executor.store, contract.run_id):
        return RunStatus.CANCELLED, "cancelled on request"
    bug = _tool_bug(state, contract) if deps.tool_errors == "raise" else None
    if bug is not None:
        return RunStatus.FAILED, bug
    progress = state.get("progress") or {}
    if deps.loop_guard and int(progress.get("stale", 0)) >= deps.loop_threshold:
        reason = (
            f"no progress: the last {progress['stale']} turns repeated actions or replies "
            "without new evidence"
        )
        return RunStatus.FAILED, reason
    spent = exhausted(contract, state)
    if spent:
        return RunStatus.BUDGET_EXHAUSTED, "budget exhausted: " + ", ".join(spent)
    met = _stop_condition_met(state, contract, deps)
    if met is not None:
        return RunStatus.FAILED, f"stop condition: {met}"
    return None


def _tool_bug(state: Mapping[str, Any], contract: TaskContract) -> str | None:
    """The reason to stop for a tool's bug this run met (a ``ToolRaised`` result), or None.

    The model is not asked again: the bug is the developer's, and ``invoke`` raises it
    once the run has stopped (:mod:`execgraph.state.errors.tool_bugs`).
    """
    bug = tool_bug(state)
    if bug is None:
        return None
    tool, call_id, raised = bug
    mark_due(contract.run_id, call_id, tool, raised)
    return bug_reason(tool, raised, call_id)


def _stop_condition_met(
    state: Mapping[str, Any], contract: TaskContract, deps: RunDeps
) -> str | None:
    """The first of the contract's stop conditions that holds, described, or None.

    Counts come from the run's whole record (one aggregate query, asked only when the
    task has stop conditions); a refusal is never reserved, so it is seen in the newest
    results, which every turn observes.
    """
    if not contract.stop_conditions:
        return None
    counts = deps.executor.store.outcomes(contract.run_id)
    for condition in contract.stop_conditions:
        if condition.kind == "denied":
            refused = [
                r.get("tool_name") or r.get("call_id")
                for r in (state.get("results") or {}).values()
                if r.get("status") == "DENIED"
            ]
            if refused:
                return f"a call of {refused[0]} was refused"
            continue
        outcome = "failed" if condition.kind == "tool_failed" else "unknown"
        seen = sum(
            c.count for c in counts if c.outcome == outcome and condition.target in (None, c.tool)
        )
        if seen >= condition.count:
            which = f"{condition.target} " if condition.target else ""
            return f"{seen} {which}call(s) ended {outcome} (limit {condition.count})"
    return None


def route_verify(state: Mapping[str, Any]) -> str:
    """END once terminal; otherwise back to the architecture's next step."""
    return "end" if is_terminal(state) else "continue"
