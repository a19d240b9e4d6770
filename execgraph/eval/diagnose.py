"""Diagnosis: walk a run's trajectory, say which layer to look at first.

It also lists the model's decision errors, classified from the same log
(:mod:`execgraph.eval.decision_errors`: understanding, action, parameter, protocol, timing,
stop judgement), each with the event that shows it.

Each symptom of the table below is a predicate over the event log (read once, as a
:class:`~execgraph.eval.trajectory.Trajectory`), and each names the layer to look at
first. Layers are ordered as an execution goes — task contract → model
input → candidate → validation → authorization → execution → observation → state update
→ termination — and ``first_layer`` is the earliest any finding names: a fault upstream
explains symptoms downstream, so that is where to start.

============================================  =============  ===============================
symptom (how it shows in the log)             layer          typical cause
============================================  =============  ===============================
run rejected at admission (``run.rejected``)  task contract  the task asks what cannot run
illegal candidates (malformed reply, unknown  candidate      the model's output is not a
tool, bad arguments, a tool not offered)                     legal action
repeated identical action (a call with the    candidate      state does not show the action
same tool and normalized arguments as one                    was done
that already succeeded)
attempted unauthorized call (``tool.denied``  authorization  permission only in the prompt
or an approval rejected); an execution with
no allow standing (``tool.started``)
budget burned on failed calls (failed tool    execution      only successes are counted
attempts and retries, or refused replies, are
half of their budget's spend, or the run ran
out with a failure in it)
write retried after a timeout / an unknown    execution      UNKNOWN treated as failure
outcome (same write requested again)
tool success but acceptance failing (every    observation    an observation misread, too
call succeeded; the result was not accepted)                 little evidence
lost progress after resume (a committed call  state update   progress kept only in context
started again; turns re-run)
evidence lost in a parallel merge (observed   state update   last write wins on merge
by a batch's call, missing from the final
evidence)
a finish the verifier rejected; a finish      termination    a model's claim taken as done
ended the run unjudged and failed acceptance
============================================  =============  ===============================
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from execgraph.eval.decision_errors import DecisionError, classify
from execgraph.eval.trajectory import CallTrace, Trajectory, read_trajectory
from execgraph.state.events import Event, EventType
from execgraph.state.reducers import EVIDENCE_WINDOW

__all__ = ["LAYERS", "Diagnosis", "Finding", "diagnose"]

LAYERS = (
    "task contract",
    "model input",
    "candidate",
    "validation",
    "authorization",
    "execution",
    "observation",
    "state update",
    "termination",
)
"""The layers of an execution, in the order to look."""

_TURN = re.compile(r"^t(\d+)$")


@dataclass(frozen=True)
class Finding:
    """One symptom found: where to look first, the event ids that show it, what to do."""

    symptom: str
    layer: str
    evidence: tuple[str, ...]
    advice: str


@dataclass(frozen=True)
class Diagnosis:
    """A run's findings, in the order of the layers they name."""

    run_id: str
    findings: list[Finding] = field(default_factory=list)
    decision_errors: list[DecisionError] = field(default_factory=list)
    """The model's decision errors, classified from the log
    (:mod:`execgraph.eval.decision_errors`)."""

    @property
    def first_layer(self) -> str | None:
        """The earliest layer any finding names (None: nothing found)."""
        return self.findings[0].layer if self.findings else None


def _admission(t: Trajectory) -> list[Finding]:
    if t.finished is None or t.finished.type is not EventType.RUN_REJECTED:
        return []
    reason = str(t.finished.payload.get("reason", ""))
    return [
        Finding(
            f"the run was rejected at admission: {reason}",
            "task contract",
            (t.finished.event_id,),
            "fix the task: its goal, allowed actions, budgets or checks",
        )
    ]


def _illegal(t: Trajectory) -> list[Finding]:
    refused = [e.event_id for e in t.model_calls if e.payload.get("refused")]
    calls = [c for c in t.calls.values() if c.illegal and c.refusal is not None]
    if not refused and not calls:
        return []
    kinds = sorted({str(c.refusal.payload.get("type")) for c in calls if c.refusal})
    what = ", ".join([*(["malformed reply"] if refused else []), *kinds])
    return [
        Finding(
            f"{len(refused) + len(calls)} illegal candidate(s) ({what})",
            "candidate",
            (*refused, *(c.refusal.event_id for c in calls if c.refusal)),
            "look at what the model was offered and replied: tool names, argument schemas",
        )
    ]


def _repeats(t: Trajectory) -> list[Finding]:
    done: dict[str, CallTrace] = {}
    repeated: list[str] = []
    for call in sorted(t.calls.values(), key=lambda c: c.first):
        if call.key is None:
            continue
        sig = call.signature
        if sig in done:
            repeated.append(t.events[call.first].event_id)
        elif call.succeeded:
            done[sig] = call
    if not repeated:
        return []
    return [
        Finding(
            f"{len(repeated)} repeated identical action(s): a call already made with the "
            "same tool and normalized arguments, and succeeded",
            "candidate",
            tuple(repeated),
            "check the decision and observation trace: does the model's input show the "
            "action was done (progress state, repeat detection)?",
        )
    ]


def _authorization(t: Trajectory) -> list[Finding]:
    findings = []
    unauthorized = [
        a.started.event_id for c in t.calls.values() for a in c.attempts if not a.authorized
    ]
    if unauthorized:
        findings.append(
            Finding(
                f"{len(unauthorized)} execution(s) with no allow standing",
                "authorization",
                tuple(unauthorized),
                "a tool ran without a policy allow or an approval: authorize before "
                "executing, never in the prompt only",
            )
        )
    attempted: list[str] = []
    for c in t.calls.values():
        if c.refusal is not None and c.refusal.type is EventType.TOOL_DENIED:
            attempted.append(c.refusal.event_id)
        attempted += [e.event_id for e in c.rejections]
    if attempted:
        findings.append(
            Finding(
                f"{len(attempted)} attempted unauthorized call(s) (denied by policy or "
                "rejected by a person)",
                "authorization",
                tuple(attempted),
                "the gate held; check why the model asked for a call outside its "
                "permissions (task contract, offered tools)",
            )
        )
    return findings


def _burned(t: Trajectory) -> list[Finding]:
    """Failures are at least half of a budget's spend (two or more), or the run ran out
    with any failure in it: tool attempts and retries, or model calls on refused replies."""
    attempts = [a for c in t.calls.values() for a in c.attempts]
    retries = sum(a.retries for a in attempts)
    failed = [a for a in attempts if a.outcome not in (None, "succeeded")]
    refused = [e for e in t.model_calls if e.payload.get("refused")]
    tools, tools_spent = len(failed) + retries, len(attempts) + retries
    exhausted = t.status == "BUDGET_EXHAUSTED"
    heavy = (tools >= 2 and 2 * tools >= tools_spent) or (
        len(refused) >= 2 and 2 * len(refused) >= len(t.model_calls)
    )
    if not (heavy or (exhausted and (tools or refused))):
        return []
    parts = [
        f"{len(failed)} failed call(s) of {len(attempts)}" if failed else "",
        f"{retries} adapter retry(ies)" if retries else "",
        f"{len(refused)} refused model reply(ies) of {len(t.model_calls)}" if refused else "",
    ]
    return [
        Finding(
            "budget burned on failures: "
            + ", ".join(p for p in parts if p)
            + (" (the run ran out of budget)" if exhausted else ""),
            "execution",
            tuple([a.started.event_id for a in failed] + [e.event_id for e in refused]),
            "check the model turns and tool attempts: every attempt is charged, so a "
            "failing tool must stop being called",
        )
    ]


def _in_doubt(call: CallTrace) -> bool:
    """Its outcome is unknown, or it attempted a side effect nobody knows committed."""
    if call.outcome == "unknown":
        return True
    return any(
        e.payload.get("attempted") and e.payload.get("committed") is None for e in call.side_effects
    )


def _retried_writes(t: Trajectory) -> list[Finding]:
    doubtful: dict[str, CallTrace] = {}
    shown: list[str] = []
    for call in sorted(t.calls.values(), key=lambda c: c.first):
        if call.key is None:
            continue
        earlier = doubtful.get(call.signature)
        if earlier is not None and earlier.completed:
            shown += [earlier.completed[-1].event_id, t.events[call.first].event_id]
        if _in_doubt(call):
            doubtful[call.signature] = call
    if not shown:
        return []
    return [
        Finding(
            "a write was requested again after a timeout or an unknown outcome",
            "execution",
            tuple(shown),
            "check the operation id and the external state: an UNKNOWN outcome is to be "
            "reconciled (idempotency key, a probe), not retried as if it failed",
        )
    ]


def _lost_progress(t: Trajectory) -> list[Finding]:
    rerun = [a.started.event_id for c in t.calls.values() for a in c.attempts if a.after_commit]
    seen = 0
    for event in t.model_calls:
        match = _TURN.match(event.turn_id or "")
        if match is None:
            continue
        turn = int(match.group(1))
        if turn < seen:
            rerun.append(event.event_id)
        seen = max(seen, turn)
    if not rerun:
        return []
    return [
        Finding(
            f"{len(rerun)} step(s) re-run after a resume: a committed call started again, "
            "or an earlier turn asked again",
            "state update",
            tuple(rerun),
            "check the checkpoints and the state log: progress must be persisted state, "
            "not context text",
        )
    ]


def _lost_evidence(
    t: Trajectory,
    observed: Sequence[Mapping[str, Any]] | None,
    final: Mapping[str, Any] | None,
) -> list[Finding]:
    if observed is None or final is None:
        return []
    sources = {str(item.get("source_id")): item for item in observed}
    if len(sources) > EVIDENCE_WINDOW:  # state keeps a window: absence proves nothing
        return []
    per_turn: dict[str | None, int] = {}
    for ran in t.calls.values():
        if ran.ran:
            per_turn[ran.turn_id] = per_turn.get(ran.turn_id, 0) + 1
    lost: list[str] = []
    for source, item in sources.items():
        call = t.calls.get(str(item.get("call_id")))
        if source in final or call is None or per_turn.get(call.turn_id, 0) < 2:
            continue
        lost.append((call.completed or [t.events[call.first]])[-1].event_id)
    if not lost:
        return []
    return [
        Finding(
            f"{len(lost)} evidence item(s) a parallel batch observed are missing from the "
            "final evidence",
            "state update",
            tuple(lost),
            "check the state merge trace: evidence must merge by field (source id), not "
            "last write wins",
        )
    ]


def _acceptance(t: Trajectory, accepted: bool | None) -> list[Finding]:
    judged = accepted
    if judged is None and t.finished is not None and t.verdicts:
        # unjudged by a checker: an ended run whose last verdict stands in (not while it runs)
        judged = bool(t.verdicts[-1].payload.get("accepted"))
    attempts = [a for c in t.calls.values() for a in c.attempts]
    if judged is not False or not attempts or any(a.outcome != "succeeded" for a in attempts):
        return []
    by = "the suite's checker" if accepted is not None else "the verifier"
    return [
        Finding(
            f"every tool call succeeded, but {by} did not accept the result",
            "observation",
            tuple(a.started.event_id for a in attempts),
            "check the evidence and the model's conclusion from it: an observation "
            "misread, or too little evidence; verify sources, accept independently",
        )
    ]


def _termination(t: Trajectory, accepted: bool | None) -> list[Finding]:
    findings = []
    rejected = [v.event_id for v in t.verdicts if v.payload.get("accepted") is False]
    if rejected:
        findings.append(
            Finding(
                f"{len(rejected)} finish(es) the verifier rejected",
                "termination",
                tuple(rejected),
                "check the finish events and the verdicts: the model declared done before "
                "the checks held (the gate caught it)",
            )
        )
    ungated = [v.event_id for v in t.verdicts if v.payload.get("gated") is False]
    if ungated and accepted is False and t.status == "COMPLETED":
        findings.append(
            Finding(
                "the run was reported COMPLETED without the verifier's gate and failed acceptance",
                "termination",
                tuple(ungated),
                "a model's claim was taken as done: gate completion on programmatic checks",
            )
        )
    return findings


def diagnose(
    events: Sequence[Event],
    *,
    accepted: bool | None = None,
    observed_evidence: Sequence[Mapping[str, Any]] | None = None,
    final_evidence: Mapping[str, Any] | None = None,
) -> Diagnosis:
    """Walk the symptom table (see the module docstring) over one run's log.

    Args:
        accepted: The suite's acceptance checker's verdict (None: unknown; once the run
            has ended, the verifier's last verdict stands in for "acceptance failing").
        observed_evidence: The evidence the run's committed calls observed
            (``store.evidence(run_id)``); with ``final_evidence`` (the final state's
            ``evidence``, keyed by source id) it shows evidence lost in a merge. Without
            both, that symptom is not checked.
    """
    t = read_trajectory(events)
    findings = [
        *_admission(t),
        *_illegal(t),
        *_repeats(t),
        *_authorization(t),
        *_burned(t),
        *_retried_writes(t),
        *_acceptance(t, accepted),
        *_lost_progress(t),
        *_lost_evidence(t, observed_evidence, final_evidence),
        *_termination(t, accepted),
    ]
    findings.sort(key=lambda f: LAYERS.index(f.layer))
    return Diagnosis(t.run_id, findings, classify(t, accepted=accepted))
