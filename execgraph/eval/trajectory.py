"""A run's event log read back as a typed trajectory: its decisions and its calls.

The metrics (:mod:`execgraph.eval.metrics`) and the diagnosis
(:mod:`execgraph.eval.diagnose`) both need the same reading of a log: which decision
proposed which call, how the gate judged that call, whether and how often it ran and how
it ended. Reading it once, here, keeps the two from disagreeing about what happened.

Only the event log is read (never state or in-memory counters), in the store's append
order: a call's own events are in pipeline order there, while the calls of a parallel
batch interleave.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from execgraph.nodes.executor import stable_hash
from execgraph.state.events import Event, EventType

__all__ = [
    "ILLEGAL_ERRORS",
    "Attempt",
    "CallTrace",
    "DecisionTrace",
    "Trajectory",
    "read_trajectory",
]

ILLEGAL_ERRORS = frozenset(
    {
        "UnknownToolError",
        "ToolDisabledError",
        "IncompatibleVersionError",
        "SchemaViolation",
        "DomainViolation",
        "ArgumentsTooLarge",
    }
)
"""Refusals at resolve/validate that are the model's error (an unknown tool, malformed
or invalid arguments). A state guard that no longer holds or a passed deadline
is the world's doing, not an illegal candidate."""

_NOT_OFFERED = "is not allowed here"  # PolicyDenied for a tool outside the contract or step


@dataclass
class Attempt:
    """One dispatch of a call to its tool (a ``tool.started``)."""

    attempt_id: str | None
    started: Event
    authorized: bool  # an allow (policy verdict or approval) stood when it started
    after_commit: bool  # the call had already ended (tool.completed) before this start
    retries: int = 0  # adapter retries inside this attempt (tool.retried)
    outcome: str | None = None  # its tool.completed outcome, if it ended


@dataclass
class CallTrace:
    """Everything the log says about one call id, in log order."""

    call_id: str
    turn_id: str | None = None
    decision_id: str | None = None
    tool: str = ""  # the name the model asked for
    key: str | None = None  # the resolved ``name@version``
    args_hash: str | None = None  # hash of the normalized arguments (tool.resolved)
    raw_hash: str = ""  # hash of the requested arguments, for a call that never resolved
    refusal: Event | None = None  # the first tool.validation_failed / tool.denied
    rejections: list[Event] = field(default_factory=list)  # approval.resolved reject
    approvals: list[tuple[Event | None, Event]] = field(default_factory=list)  # (asked, answer)
    asked: list[Event] = field(default_factory=list)  # approval.requested still unanswered
    attempts: list[Attempt] = field(default_factory=list)
    completed: list[Event] = field(default_factory=list)
    side_effects: list[Event] = field(default_factory=list)
    first: int = 0  # index of its request in the log (of its first event before one)

    @property
    def signature(self) -> str:
        """Tool and normalized arguments: what makes two calls the same action."""
        if self.key is not None and self.args_hash is not None:
            return f"{self.key.split('@')[0]}:{self.args_hash}"
        return f"{self.tool}:{self.raw_hash}"

    @property
    def illegal(self) -> bool:
        """Refused as the model's own error: unknown tool, bad arguments, not offered."""
        if self.refusal is None:
            return False
        kind = str(self.refusal.payload.get("type", ""))
        if self.refusal.type is EventType.TOOL_VALIDATION_FAILED:
            return kind in ILLEGAL_ERRORS
        return kind == "PolicyDenied" and _NOT_OFFERED in str(self.refusal.payload.get("message"))

    @property
    def outcome(self) -> str | None:
        """How the call ended (its last tool.completed), None while it has not."""
        return str(self.completed[-1].payload.get("outcome")) if self.completed else None

    @property
    def ran(self) -> bool:
        """Dispatched to its tool at least once."""
        return bool(self.attempts)

    @property
    def succeeded(self) -> bool:
        return self.outcome == "succeeded"


@dataclass
class DecisionTrace:
    """One decision the model made: a tool call (with its call) or a control decision."""

    decision_id: str
    turn_id: str | None
    kind: str  # tool_call, finish, answer, ask_user, abort, revise_plan
    content: str
    event: Event
    call: CallTrace | None = None
    verdict: Event | None = None  # the verifier's verdict on a finish / answer, if judged


@dataclass
class Trajectory:
    """A run's log, read: model calls, decisions, calls and the run's own events."""

    run_id: str
    events: list[Event]
    model_calls: list[Event]
    refused_candidates: int  # tool/control calls in model replies the runtime refused
    decisions: list[DecisionTrace]
    calls: dict[str, CallTrace]
    verdicts: list[Event]
    admitted: Event | None
    finished: Event | None  # the last run.finished / run.rejected
    status: str | None


def _reply_calls(payload: dict[str, Any]) -> int:
    data = (payload.get("message") or {}).get("data") or {}
    return len(data.get("tool_calls") or []) + len(data.get("invalid_tool_calls") or [])


def _call(calls: dict[str, CallTrace], event: Event, index: int) -> CallTrace:
    assert event.call_id is not None
    call = calls.get(event.call_id)
    if call is None:
        call = calls[event.call_id] = CallTrace(event.call_id, first=index)
    call.turn_id = call.turn_id or event.turn_id
    call.decision_id = call.decision_id or event.decision_id
    return call


def _read_calls(events: Sequence[Event]) -> dict[str, CallTrace]:
    calls: dict[str, CallTrace] = {}
    allowed: dict[str, bool] = {}  # per call: does an allow stand right now
    attempts: dict[tuple[str, str | None], Attempt] = {}
    for index, e in enumerate(events):
        if e.call_id is None:
            continue
        call, kind, p = _call(calls, e, index), e.type, e.payload
        if kind is EventType.TOOL_REQUESTED:
            if not call.tool:  # hybrid's gate logs an answer before the request
                call.tool, call.first = str(p.get("tool", "")), index
            if not call.raw_hash:
                call.raw_hash = stable_hash(p.get("arguments") or {})[:16]
        elif kind is EventType.TOOL_RESOLVED:
            call.key, call.args_hash = str(p.get("tool")), str(p.get("args_hash"))
            allowed[call.call_id] = p.get("verdict") == "allow"
        elif kind in (EventType.TOOL_VALIDATION_FAILED, EventType.TOOL_DENIED):
            call.refusal = call.refusal or e
            allowed[call.call_id] = False
        elif kind is EventType.APPROVAL_REQUESTED:
            allowed[call.call_id] = False
            call.asked.append(e)
        elif kind is EventType.APPROVAL_RESOLVED:
            action = p.get("action")
            allowed[call.call_id] = action == "approve"
            if action == "reject":
                call.rejections.append(e)
            # hybrid's fixed gate asks before the executor and logs only the answer
            call.approvals.append((call.asked.pop(0) if call.asked else None, e))
        elif kind is EventType.TOOL_STARTED:
            attempt = Attempt(
                e.attempt_id,
                e,
                authorized=allowed.get(call.call_id, False),
                after_commit=bool(call.completed),
            )
            call.attempts.append(attempt)
            attempts[(call.call_id, e.attempt_id)] = attempt
        elif kind is EventType.TOOL_RETRIED:
            if (found := attempts.get((call.call_id, e.attempt_id))) is not None:
                found.retries += 1
        elif kind is EventType.TOOL_SIDE_EFFECT_OBSERVED:
            call.side_effects.append(e)
        elif kind is EventType.TOOL_COMPLETED:
            call.completed.append(e)
            if (found := attempts.get((call.call_id, e.attempt_id))) is not None:
                found.outcome = str(p.get("outcome"))
    return calls


def _read_decisions(
    events: Sequence[Event], calls: dict[str, CallTrace], verdicts: Iterable[Event]
) -> list[DecisionTrace]:
    position = {e.event_id: i for i, e in enumerate(events)}
    by_turn = {v.turn_id: v for v in verdicts}
    decisions: list[DecisionTrace] = []
    recorded: set[str] = set()
    for e in events:
        if e.type is not EventType.DECISION_RECORDED:
            continue
        p = e.payload
        decision_id = str(p.get("decision_id") or e.decision_id)
        recorded.add(decision_id)
        kind = str(p.get("kind", ""))
        if kind == "request_approval":  # a tool call a person approves first: one to judge
            kind = "tool_call"
        call = calls.get(str(p.get("call_id"))) if kind == "tool_call" else None
        verdict = by_turn.get(e.turn_id) if kind in ("finish", "answer") else None
        decisions.append(
            DecisionTrace(
                decision_id, e.turn_id, kind, str(p.get("content") or ""), e, call, verdict
            )
        )
    # A plan's steps are decided by the planner's one reply: each step's call is a decision
    # of its own, logged only as the call's request (plan-and-execute).
    for call in sorted(calls.values(), key=lambda c: c.first):
        if call.decision_id and call.decision_id not in recorded and call.tool:
            first = events[call.first]
            decisions.append(
                DecisionTrace(call.decision_id, call.turn_id, "tool_call", "", first, call)
            )
            recorded.add(call.decision_id)
    decisions.sort(key=lambda d: position[d.event.event_id])
    return decisions


def read_trajectory(events: Sequence[Event]) -> Trajectory:
    """Read one run's log (``store.events(run_id)``) into a :class:`Trajectory`."""
    events = list(events)
    calls = _read_calls(events)
    verdicts = [e for e in events if e.type is EventType.VERIFIER_VERDICT]
    models = [e for e in events if e.type is EventType.MODEL_CALLED]
    refused = sum(max(1, _reply_calls(e.payload)) for e in models if e.payload.get("refused"))
    ends = [e for e in events if e.type in (EventType.RUN_FINISHED, EventType.RUN_REJECTED)]
    finished = ends[-1] if ends else None
    status = None
    if finished is not None:
        status = str(finished.payload.get("status") or "FAILED")
    return Trajectory(
        run_id=events[0].run_id if events else "",
        events=events,
        model_calls=models,
        refused_candidates=refused,
        decisions=_read_decisions(events, calls, verdicts),
        calls=calls,
        verdicts=verdicts,
        admitted=next((e for e in events if e.type is EventType.RUN_ADMITTED), None),
        finished=finished,
        status=status,
    )
