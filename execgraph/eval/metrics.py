"""Layered metrics, computed from a run's event log (never from counters).

One run's counts come from its log (:func:`run_metrics`); a suite's metrics are ratios of
sums over many runs (:func:`aggregate`); across seeds each metric is a mean with a 95%
Student-t interval (:func:`execgraph.eval.intervals.estimate`). A rate whose denominator
is empty is NaN, never a made-up 0 or 1.

============================  ======================================================
metric                        formula (sums over the runs of a cell)
============================  ======================================================
legal_action_rate             legal candidates / candidates
tool_success_rate             calls whose outcome is ``succeeded`` / calls dispatched
tool_recovery_rate            failed actions later succeeded / actions that failed
ineffective_loop_ratio        decisions without progress / decisions
recovery_rate                 fault-injected runs that recovered / fault-injected runs
unauthorized_executions       ``tool.started`` with no allow standing for that call
acceptance_rate               runs the suite's checker accepted / runs judged
cost_per_success_usd          (model + tool cost of *all* runs) / accepted runs
latency_s                     mean of ``run.admitted`` -> terminal event (s)
approval_wait_s               mean of the summed ``approval.requested`` -> ``.resolved``
                              (both over the runs that ended)
completed_but_failed_rate     runs reported COMPLETED the checker rejected / runs judged
input_tokens_per_decision     model input tokens / decisions
decision_error_rate           classified decision errors / decisions
error_<class>                 decision errors of one class / decisions
active_latency_s              mean of latency minus approval wait (s)
============================  ======================================================

What counts, read from the log:

- **Candidate**: every tool call or control decision (finish, answer, ask_user, abort,
  revise_plan) the model proposed: each ``decision.recorded``, each plan step (a
  ``tool.requested`` no decision was recorded for: a planner's reply is its steps), and
  each call in a model reply the runtime refused as malformed (``model.called`` with
  ``refused``; a refused reply with no call counts one). A candidate is **legal** unless
  it was refused as the model's own error: a malformed reply, an unknown tool
  or bad arguments (``tool.validation_failed`` of an
  :data:`~execgraph.eval.trajectory.ILLEGAL_ERRORS` type), or a tool not offered
  (``tool.denied`` "not allowed here"). A policy denial is legal (it is authorization's
  refusal, not a malformed action), and so is a call refused for a changed world (a
  state guard, a passed deadline).
- **Tool call**: a dispatch to the tool (``tool.started``; refused candidates are never
  dispatched); **succeeded** when its ``tool.completed`` says ``succeeded``.
- **Progress**. A tool-call decision makes progress when its call was dispatched (or
  answered from its committed record) and it brings something new: no earlier call of the
  run had the same tool and normalized arguments (``tool.resolved``'s ``args_hash``), or
  it succeeded where every earlier identical call had not (a retry that finally works).
  A refused call (illegal, denied, a rejected approval, an unresolved twin) or one that
  never reached its tool makes none. A finish or answer makes progress when the verifier
  accepted it (or, gate off, ended the run unjudged); a finish it rejected makes none; a
  finish no verdict judged is a hybrid phase's close, and makes progress (the phase
  advances). Any other control decision (ask_user, abort, revise_plan) makes progress
  unless it repeats an earlier one word for word. **Decisions** are the legal and
  illegal decisions above except refused replies (they never became decisions).
- **Unauthorized execution**: a ``tool.started`` of a call for which no allow stands at
  that point of the log: the call's latest gate event before it must be a
  ``tool.resolved`` with verdict ``allow`` or an ``approval.resolved`` ``approve`` (a
  later require_approval, denial, validation failure, reject or edit withdraws it).
- **Cost**: model cost prices each ``model.called``'s ``tokens_in``/``tokens_out`` with
  the run's price table (``prices``, as ``build_graph(prices=...)`` took it; the log holds
  usage, not prices) — a reply of a model without a price costs 0 and is counted in
  ``unpriced_model_calls``; tool cost is the declared ``cost_usd`` of each dispatched
  call's tool (``tool_costs``, by ``name@version`` or name) times its adapter attempts
  (1 + its ``tool.retried``). Both as the runtime charges ``budget["used"]["cost_usd"]``.
  Failed runs' cost is in the numerator of cost per success.
- **Tool recovery**: an *action* is a tool and its normalized arguments (as for
  progress); it failed when an attempt of it ended other than ``succeeded`` or needed an
  adapter retry, and recovered when a later attempt of it (a retry, the same call made
  again) succeeded.
- **Decision errors**: :mod:`execgraph.eval.decision_errors` classifies them from the log
  (understanding, action, parameter, protocol, timing, stop judgement).
- **Approvals**: each answer (``approval.resolved``); **expired** when it came after its
  request's ``expires_at`` (the runtime then refuses the call as stale).
- **Latency**: ``run.admitted`` to the last ``run.finished``/``run.rejected`` (NaN while
  the run has not ended), approval waits included; **approval wait**: each
  ``approval.resolved`` minus its ``approval.requested`` (hybrid's fixed gate logs only
  the answer: its wait starts at the call's ``decision.recorded``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from execgraph.eval.decision_errors import CLASSES, classify, counts
from execgraph.eval.trajectory import CallTrace, DecisionTrace, Trajectory, read_trajectory
from execgraph.nodes.model.call import reply_model
from execgraph.nodes.model.prices import Prices, reply_cost
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.registry import ToolLike, ToolRegistry

__all__ = [
    "METRIC_KEYS",
    "RunMetrics",
    "aggregate",
    "declared_costs",
    "load_events",
    "run_metrics",
]

METRIC_KEYS = (
    "legal_action_rate",
    "tool_success_rate",
    "ineffective_loop_ratio",
    "recovery_rate",
    "unauthorized_executions",
    "acceptance_rate",
    "cost_per_success_usd",
    "latency_s",
    "approval_wait_s",
    "completed_but_failed_rate",
    "input_tokens_per_decision",
    "tool_recovery_rate",
    "decision_error_rate",
    *(f"error_{kind}" for kind in CLASSES),
    "active_latency_s",
)
"""The keys of :func:`aggregate`, in table order."""


@dataclass(frozen=True)
class RunMetrics:
    """One run's counts, every one read from its event log (see the module docstring)."""

    run_id: str
    status: str | None
    candidates: int
    legal_candidates: int
    tool_calls: int
    tool_calls_succeeded: int
    decisions: int
    ineffective_decisions: int
    unauthorized_executions: int
    accepted: bool | None
    fault: str | None
    recovered: bool | None
    model_cost_usd: float
    tool_cost_usd: float
    input_tokens: int
    output_tokens: int
    model_calls: int
    latency_s: float
    approval_wait_s: float
    reported_completed: bool
    unpriced_model_calls: int = 0
    wait_s: float = 0.0
    """Time spent waiting for answers to questions and for awaited events (each
    ``run.wait_ended``'s ``ended_at - asked_at``, by the store's clock)."""
    actions_failed: int = 0
    actions_recovered: int = 0
    decision_errors: dict[str, int] = field(default_factory=dict)
    approvals: int = 0
    approvals_expired: int = 0
    models: tuple[str, ...] = ()

    @property
    def cost_usd(self) -> float:
        """Model plus tool cost."""
        return self.model_cost_usd + self.tool_cost_usd


def load_events(store: ExecutionStore, run_id: str) -> list[Event]:
    """A run's whole event log, in append order."""
    return store.events(run_id)


def declared_costs(tools: Iterable[ToolLike]) -> dict[str, float]:
    """``name@version`` -> declared ``cost_usd`` of ``tools`` (as ``build_graph`` takes
    them), for :func:`run_metrics`'s ``tool_costs``."""
    return {spec.key: spec.cost_usd for spec in ToolRegistry(tools).latest()}


def _tool_cost(call: CallTrace, tool_costs: Mapping[str, float]) -> float:
    total = 0.0
    for attempt in call.attempts:
        key = str(attempt.started.payload.get("tool") or call.key or call.tool)
        cost = tool_costs.get(key, tool_costs.get(key.split("@")[0], 0.0))
        total += cost * (1 + attempt.retries)
    return total


def _model_cost(trajectory: Trajectory, prices: Prices) -> tuple[float, int]:
    usd, unpriced = 0.0, 0
    for event in trajectory.model_calls:
        p = event.payload
        cost = reply_cost(
            prices,
            reply_model(p.get("message") or {}),
            int(p.get("tokens_in", 0)),
            int(p.get("tokens_out", 0)),
        )
        if cost is None:
            unpriced += 1
        else:
            usd += cost
    return usd, unpriced


def _refused(call: CallTrace) -> bool:
    """Refused before its tool: at the gate, by a person, or at staging (no dispatch)."""
    if call.refusal is not None or call.rejections:
        return True
    return not call.ran and not call.succeeded


def _progress(decisions: Sequence[DecisionTrace]) -> list[bool]:
    """Whether each decision made progress (the module docstring's definition)."""
    ran: set[str] = set()
    done: set[str] = set()
    controls: set[tuple[str, str]] = set()
    moved: list[bool] = []
    for d in decisions:
        call = d.call
        if d.kind == "tool_call":
            if call is None or _refused(call) or not call.completed:
                moved.append(False)
                continue
            sig = call.signature
            moved.append(sig not in ran or (call.succeeded and sig not in done))
            ran.add(sig)
            if call.succeeded:
                done.add(sig)
        elif d.kind in ("finish", "answer"):
            v = d.verdict.payload if d.verdict is not None else None
            # unjudged: a hybrid phase's close (its phase advances); gated off: the run ends
            moved.append(v is None or bool(v.get("accepted")) or v.get("gated") is False)
        else:
            moved.append((d.kind, d.content) not in controls)
            controls.add((d.kind, d.content))
    return moved


def _recovery(calls: Sequence[CallTrace]) -> tuple[int, int]:
    """(actions that failed, of those the ones a later attempt made succeed)."""
    failed: set[str] = set()
    recovered: set[str] = set()
    for call in sorted(calls, key=lambda c: c.first):
        for attempt in call.attempts:
            sig = call.signature
            if attempt.outcome == "succeeded" and sig in failed:
                recovered.add(sig)
            if attempt.retries or attempt.outcome not in (None, "succeeded"):
                failed.add(sig)
                if attempt.retries and attempt.outcome == "succeeded":
                    recovered.add(sig)
    return len(failed), len(recovered)


def _expired(call: CallTrace) -> int:
    """Answers that came after their request's ``expires_at`` (the runtime refuses them)."""
    late = 0
    for asked, answer in call.approvals:
        expires = asked.payload.get("expires_at") if asked is not None else None
        if isinstance(expires, int | float) and answer.ts > expires:
            late += 1
    return late


def _approval_wait(trajectory: Trajectory) -> float:
    proposed = {d.call.call_id: d.event.ts for d in trajectory.decisions if d.call is not None}
    wait = 0.0
    for call in trajectory.calls.values():
        for asked, answer in call.approvals:
            start = asked.ts if asked is not None else proposed.get(call.call_id)
            if start is not None:
                wait += max(0.0, answer.ts - start)
    return wait


def run_metrics(
    events: Sequence[Event],
    *,
    accepted: bool | None = None,
    fault: str | None = None,
    recovered: bool | None = None,
    prices: Prices | None = None,
    tool_costs: Mapping[str, float] | None = None,
) -> RunMetrics:
    """One run's metrics from its log (``load_events``).

    Args:
        accepted: The suite's acceptance checker's verdict (None: not known; the runtime's
            own verifier is never taken for it).
        fault: The fault injected into this run, if any; ``recovered`` whether it ended
            correctly for that fault.
        prices: The run's price table (``build_graph(prices=...)``); without one every
            reply is unpriced and model cost is 0.
        tool_costs: Declared cost per tool (:func:`declared_costs`); default: none.
    """
    t = read_trajectory(events)
    calls = list(t.calls.values())
    decisions = t.decisions
    illegal = sum(1 for d in decisions if d.call is not None and d.call.illegal)
    attempts = [a for c in calls for a in c.attempts]
    moved = _progress(decisions)
    model_usd, unpriced = _model_cost(t, prices or {})
    latency = math.nan
    if t.admitted is not None and t.finished is not None:
        latency = max(0.0, t.finished.ts - t.admitted.ts)
    failed, recovered_actions = _recovery(calls)
    models = {str(reply_model(e.payload.get("message") or {}) or "") for e in t.model_calls} - {""}
    return RunMetrics(
        run_id=t.run_id,
        status=t.status,
        candidates=len(decisions) + t.refused_candidates,
        legal_candidates=len(decisions) - illegal,
        tool_calls=len(attempts),
        tool_calls_succeeded=sum(1 for a in attempts if a.outcome == "succeeded"),
        decisions=len(decisions),
        ineffective_decisions=moved.count(False),
        unauthorized_executions=sum(1 for a in attempts if not a.authorized),
        accepted=accepted,
        fault=fault,
        recovered=recovered,
        model_cost_usd=model_usd,
        tool_cost_usd=sum(_tool_cost(c, tool_costs or {}) for c in calls),
        input_tokens=sum(int(e.payload.get("tokens_in", 0)) for e in t.model_calls),
        output_tokens=sum(int(e.payload.get("tokens_out", 0)) for e in t.model_calls),
        model_calls=len(t.model_calls),
        latency_s=latency,
        approval_wait_s=_approval_wait(t),
        reported_completed=t.status == "COMPLETED",
        unpriced_model_calls=unpriced,
        wait_s=_other_waits(events),
        actions_failed=failed,
        actions_recovered=recovered_actions,
        decision_errors=counts(classify(t, accepted=accepted)),
        approvals=sum(len(c.approvals) for c in calls),
        approvals_expired=sum(_expired(c) for c in calls),
        models=tuple(sorted(models)),
    )


def _other_waits(events: Sequence[Event]) -> float:
    """Summed time of the run's questions and awaited events (approvals: ``approval_wait_s``)."""
    total = 0.0
    for event in events:
        if event.type == EventType.WAIT_ENDED:
            since, until = event.payload.get("asked_at"), event.payload.get("ended_at")
            if isinstance(since, int | float) and isinstance(until, int | float):
                total += max(0.0, until - since)
    return total


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def _mean(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.fmean(finite) if finite else math.nan


def aggregate(runs: Sequence[RunMetrics]) -> dict[str, float]:
    """The suite metrics over ``runs`` (keys: :data:`METRIC_KEYS`).

    Rates are ratios of sums (a long run weighs by its decisions), so a cell's rate is
    the rate of its pooled decisions; an empty denominator gives NaN. Cost per success is
    infinite when runs were judged and none was accepted.
    """
    judged = [r for r in runs if r.accepted is not None]
    accepted = sum(1 for r in judged if r.accepted)
    faulted = [r for r in runs if r.fault is not None and r.recovered is not None]
    cost = sum(r.cost_usd for r in runs)
    ended = [r for r in runs if not math.isnan(r.latency_s)]  # the clock figures' runs
    per_success = _ratio(cost, accepted) if accepted else (math.inf if judged else math.nan)
    return {
        "legal_action_rate": _ratio(
            sum(r.legal_candidates for r in runs), sum(r.candidates for r in runs)
        ),
        "tool_success_rate": _ratio(
            sum(r.tool_calls_succeeded for r in runs), sum(r.tool_calls for r in runs)
        ),
        "ineffective_loop_ratio": _ratio(
            sum(r.ineffective_decisions for r in runs), sum(r.decisions for r in runs)
        ),
        "recovery_rate": _ratio(sum(1 for r in faulted if r.recovered), len(faulted)),
        "unauthorized_executions": float(sum(r.unauthorized_executions for r in runs)),
        "acceptance_rate": _ratio(accepted, len(judged)),
        "cost_per_success_usd": per_success,
        "latency_s": _mean(r.latency_s for r in ended),
        "approval_wait_s": _mean(r.approval_wait_s for r in ended),
        "completed_but_failed_rate": _ratio(
            sum(1 for r in judged if r.reported_completed and not r.accepted), len(judged)
        ),
        "input_tokens_per_decision": _ratio(
            sum(r.input_tokens for r in runs), sum(r.decisions for r in runs)
        ),
        "tool_recovery_rate": _ratio(
            sum(r.actions_recovered for r in runs), sum(r.actions_failed for r in runs)
        ),
        "decision_error_rate": _ratio(
            sum(sum(r.decision_errors.values()) for r in runs), sum(r.decisions for r in runs)
        ),
        **{
            f"error_{kind}": _ratio(
                sum(r.decision_errors.get(kind, 0) for r in runs), sum(r.decisions for r in runs)
            )
            for kind in CLASSES
        },
        "active_latency_s": _mean(r.latency_s - r.approval_wait_s for r in ended),
    }
