"""A run's decision errors, classified from its event log alone.

Any run can be read this way — a real model's as well as the suite's noisy policy, which
labels its own errors only because it made them on purpose. Each decision the model made
(and each reply the runtime refused) is put in at most one class, the first that fits:

=================  ==========================================================================
class              what shows it in the log
=================  ==========================================================================
protocol           a reply the runtime refused as malformed (``model.called`` ``refused``),
                   or a call of a tool that does not exist (``UnknownToolError``): the model
                   did not speak the interface
action             a real tool, but not one this step offers or the policy allows
                   (``tool.denied``): the wrong action
parameter          the right tool with wrong values: arguments its schema or domain refuse
                   (``SchemaViolation``, ``DomainViolation``, ``ArgumentsTooLarge``), a call
                   the tool answered ``NOT_FOUND`` (a wrong path, id or URL), or one a
                   person rejected
understanding      acting against what was observed: a call identical (tool and normalized
                   arguments) to one that already succeeded, or a finish stating again an
                   answer the verifier already rejected
timing             acting on a state that was not settled: a call made again while an identical
                   earlier call's outcome was still unknown, or one refused because the world
                   had moved (``StateGuardMismatch``) or its deadline had passed
stop judgement     a finish the verifier rejected (stopped too early), a finish that ended the
                   run unjudged and failed acceptance, or a run the loop guard had to stop
                   (it did not stop on its own)
=================  ==========================================================================

A tool that failed on its own (a 503, a timeout) is the world's error, not the model's,
and so is an approval that expired while the person took their time: neither is counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from execgraph.eval.trajectory import CallTrace, DecisionTrace, Trajectory
from execgraph.state.events import EventType

__all__ = ["CLASSES", "DecisionError", "classify", "counts"]

CLASSES: tuple[str, ...] = (
    "understanding",
    "action",
    "parameter",
    "protocol",
    "timing",
    "stop_judgement",
)
"""The decision-error classes, in report order."""

_PARAMETER_TYPES = frozenset({"SchemaViolation", "DomainViolation", "ArgumentsTooLarge"})
_TIMING_TYPES = frozenset({"StateGuardMismatch", "DeadlineExceeded"})
_WRONG_VALUE = frozenset({"NOT_FOUND"})
_LOOP_STOP = "no progress"


@dataclass(frozen=True)
class DecisionError:
    """One classified error: its class, the event that shows it, and why."""

    kind: str
    event_id: str
    turn_id: str | None
    why: str


def _refusal_type(call: CallTrace) -> str:
    return str(call.refusal.payload.get("type", "")) if call.refusal is not None else ""


def _call_error(call: CallTrace, done: set[str], unknown: set[str]) -> tuple[str, str] | None:
    """The class of a tool-call decision's error, and why, or None."""
    kind = _refusal_type(call)
    if call.refusal is not None:
        if kind in ("UnknownToolError", "ToolDisabledError", "IncompatibleVersionError"):
            return "protocol", f"called a tool that is not there ({call.tool})"
        if call.refusal.type is EventType.TOOL_DENIED and kind in ("PolicyDenied", "PolicyError"):
            return "action", f"{call.tool} is not allowed here"
        if kind in _PARAMETER_TYPES:
            return "parameter", f"arguments of {call.tool} refused ({kind})"
        if kind in _TIMING_TYPES:
            return "timing", f"{call.tool} acted on a state that had moved ({kind})"
    if call.rejections:
        return "parameter", f"a person rejected this {call.tool} call"
    if call.key is not None:
        if call.signature in unknown:
            return "timing", f"{call.tool} again while the earlier call's outcome was unknown"
        if call.signature in done:
            return "understanding", f"{call.tool} again, identical to one that succeeded"
    if call.ran and call.completed:
        status = str(call.completed[-1].payload.get("status") or "")
        if status in _WRONG_VALUE:
            return "parameter", f"{call.tool} answered {status}"
    return None


def _finish_error(
    decision: DecisionTrace, rejected: set[str], accepted: bool | None
) -> tuple[str, str] | None:
    verdict = decision.verdict.payload if decision.verdict is not None else None
    if verdict is None:
        return None
    if verdict.get("accepted") is False:
        if decision.content and decision.content in rejected:
            return "understanding", "stated again an answer the verifier had rejected"
        rejected.add(decision.content)
        return "stop_judgement", "finished before the checks held (the verifier rejected it)"
    if verdict.get("gated") is False and accepted is False:
        return "stop_judgement", "finished unjudged, and the result failed acceptance"
    return None


def classify(t: Trajectory, *, accepted: bool | None = None) -> list[DecisionError]:
    """Every decision error in ``t``, in log order (``accepted``: the suite's verdict)."""
    errors: list[DecisionError] = []
    for event in t.model_calls:
        if event.payload.get("refused"):
            why = "a reply the runtime could not read as a decision"
            errors.append(DecisionError("protocol", event.event_id, event.turn_id, why))
    done: set[str] = set()
    unknown: set[str] = set()
    rejected: set[str] = set()
    for d in t.decisions:
        found: tuple[str, str] | None = None
        if d.kind == "tool_call" and d.call is not None:
            found = _call_error(d.call, done, unknown)
            if d.call.key is not None:
                if d.call.succeeded:
                    done.add(d.call.signature)
                if d.call.outcome == "unknown":
                    unknown.add(d.call.signature)
                else:
                    unknown.discard(d.call.signature)
        elif d.kind in ("finish", "answer"):
            found = _finish_error(d, rejected, accepted)
        if found is not None:
            errors.append(DecisionError(found[0], d.event.event_id, d.turn_id, found[1]))
    if t.finished is not None and _LOOP_STOP in str(
        (t.finished.payload.get("error") or {}).get("message", "")
        or t.finished.payload.get("reason", "")
    ):
        why = "kept repeating until the loop guard stopped the run"
        errors.append(DecisionError("stop_judgement", t.finished.event_id, None, why))
    position = {event.event_id: i for i, event in enumerate(t.events)}
    errors.sort(key=lambda e: position.get(e.event_id, len(position)))
    return errors


def counts(errors: list[DecisionError]) -> dict[str, int]:
    """Errors per class, every class present (0 where none)."""
    return {kind: sum(1 for e in errors if e.kind == kind) for kind in CLASSES}
