"""Call: one tool call as it flows through the executor's stages, from request to commit.

Every stage of :mod:`execgraph.nodes.executor.pipeline` works on the same object, so what
one stage learned is there for the next: the request (as proposed, or as a person edited
it), its authorization (the spec resolved once, the arguments normalized and validated
with both hashes, the policy's verdict, the approval token, who approved), the attempt,
the record's key and fence, the lease and the cancel signal the tool runs with. Nothing
resolves the tool or re-derives the arguments again downstream.

A call's events have one home, its :class:`EventRecorder`: every stage records there, in
the order things happened, each event carrying every id of the call. The recorder only
keeps them; the pipeline decides which store write takes them (the commit transaction, a
refusal's log, the write before a person is asked), and a call's events are written
whole, never as a list several modules append to on their own.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from execgraph.nodes.cancel import call_cancel_requested, cancel_requested
from execgraph.nodes.executor.argument_size import logged_arguments
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.diagnostics import describe, logger
from execgraph.state.errors import ExecGraphError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.lease_keeper import Lease
from execgraph.tools.policy import PolicyDecision
from execgraph.tools.provenance import ArgumentProvenance
from execgraph.tools.spec import ToolSpec

__all__ = [
    "Authorized",
    "Call",
    "EventRecorder",
    "Gate",
    "Normalized",
    "Report",
    "Stage",
    "Validated",
    "call_event",
]

Stage = Literal["invoke", "verify", "reconcile"]
"""Where tool code raised: the tool, its verify check, or its reconcile probe."""

Report = Callable[[Stage, BaseException], None]
"""Records that tool code raised at a stage (:meth:`Call.report`)."""

_log = logger("executor")


@dataclass(frozen=True)
class Normalized:
    """Arguments after aliases, path canonicalization and defaults; hashes before and after;
    ``size``: bytes of their canonical JSON (what the run's argument bound counts)."""

    arguments: dict[str, Any]
    hash_before: str
    args_hash: str
    paths: tuple[str, ...] = ()
    size: int = 0


@dataclass(frozen=True)
class Validated:
    """Arguments that passed schema, domain, state-guard and runtime checks."""

    args: BaseModel
    normalized: Normalized


@dataclass(frozen=True)
class Authorized:
    """A call's authorization: the resolved spec, the validated arguments, the policy's
    verdict and the arguments' provenance; ``token_id`` the signed approval token that
    allowed it, ``approver`` the person who did."""

    spec: ToolSpec
    validated: Validated
    decision: PolicyDecision
    token_id: str | None = None
    approver: str | None = None
    provenance: Mapping[str, ArgumentProvenance] | None = None
    """Where each argument's value came from, as the policy saw it (None: not computed,
    for a call no provenance rule reads and no person is asked about)."""


@dataclass(frozen=True)
class Gate:
    """A verdict on a call reached outside the executor's own gate (a fixed approval
    node): the events it logged, and what may run (``authorized``) or why not
    (``failure``). See :func:`execgraph.nodes.executor.pipeline.execute`."""

    events: tuple[Event, ...] = ()
    authorized: Authorized | None = None
    failure: ExecGraphError | None = None


def call_event(request: ToolExecutionRequest, type: EventType, **kw: Any) -> Event:
    """An event of ``request``'s call carrying run, turn, decision, call and step ids.

    A ``tool.requested`` event holds the call's arguments only within the run's bound: a
    call refused as too large is logged with its size, not stored by its own refusal.
    """
    payload = kw.get("payload")
    if type is EventType.TOOL_REQUESTED and payload and "arguments" in payload:
        logged = logged_arguments(payload["arguments"], request.max_argument_bytes)
        if logged is not payload["arguments"]:
            kw["payload"] = {**payload, "arguments": logged}
    return make_event(
        type,
        request.run_id,
        call_id=request.call_id,
        turn_id=request.turn_id,
        decision_id=request.decision_id,
        step_id=request.step_id,
        **kw,
    )


class EventRecorder:
    """The one place a call's events are appended, in the order they happen.

    Thread-safe: a tool's output arrives from its own threads while the pipeline records
    its stop. :meth:`event` only builds one (to name an event logged earlier).
    """

    def __init__(self, request: ToolExecutionRequest) -> None:
        self._request = request  # an edit changes the arguments, never the call's ids
        self._events: list[Event] = []
        self._lock = threading.Lock()

    def event(self, type: EventType, **kw: Any) -> Event:
        """The event of this call, built but not recorded."""
        return call_event(self._request, type, **kw)

    def record(self, type: EventType, **kw: Any) -> Event:
        """Build the event and record it."""
        event = call_event(self._request, type, **kw)
        with self._lock:
            self._events.append(event)
        return event

    def extend(self, events: Iterable[Event]) -> None:
        """Record events logged for this call elsewhere (a gate outside the executor)."""
        with self._lock:
            self._events.extend(events)

    def recorded(self) -> list[Event]:
        """Every event recorded so far, in order."""
        with self._lock:
            return list(self._events)


@dataclass(eq=False)
class Call:
    """One tool call from the gate to its commit (see the module docstring).

    Attributes:
        request: The request as proposed (a person's edit replaces it).
        deps: What the executor works with.
        events: Where this call's events are recorded.
        round: The approval round (an edit, or a target changed while a person decided,
            asks again; the round tells their events apart).
        authorized: What may run, once the gate authorized it.
        refusal: Why the gate refused it.
        attempt_id: This attempt's id, once the call is ready for its record.
        key: The execution record's (idempotency) key.
        fence: The record's fence while this worker holds it.
        lease: The record's lease (registered before the record exists).
        cancel: The tool's stop signal (set at its deadline, on a cancel request, and
            when the record's lease is lost).
    """

    request: ToolExecutionRequest
    deps: ExecutorDeps
    events: EventRecorder
    round: int = 0
    authorized: Authorized | None = None
    refusal: ExecGraphError | None = None
    attempt_id: str = ""
    key: str = ""
    fence: int | None = None
    lease: Lease[str] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    _raised: Counter[str] = field(default_factory=Counter, repr=False)

    @classmethod
    def of(cls, request: ToolExecutionRequest | dict[str, Any], deps: ExecutorDeps) -> Call:
        """A new call of ``request`` (a request dict is validated here)."""
        if not isinstance(request, ToolExecutionRequest):
            request = ToolExecutionRequest.model_validate(request)
        return cls(request, deps, EventRecorder(request))

    @classmethod
    def gated(cls, request: ToolExecutionRequest, gate: Gate, deps: ExecutorDeps) -> Call:
        """A call of ``request`` on which ``gate`` decided, its events recorded."""
        call = cls.of(request, deps)
        call.events.extend(gate.events)
        call.authorized, call.refusal = gate.authorized, gate.failure
        return call

    @property
    def cleared(self) -> Authorized | None:
        """The authorization if the call may run now: allowed, nothing refused it."""
        authorized = self.authorized
        if self.refusal is not None or authorized is None:
            return None
        return authorized if authorized.decision.verdict == "allow" else None

    @property
    def spec(self) -> ToolSpec:
        """The resolved tool (only of an authorized call)."""
        assert self.authorized is not None, "only an authorized call has a spec"
        return self.authorized.spec

    def attempt_event(self, type: EventType, **kw: Any) -> Event:
        """Record an event of this call's attempt."""
        return self.events.record(type, attempt_id=self.attempt_id, **kw)

    def cancelled(self) -> bool:
        """Whether the call is to stop: its record's lease was lost, or someone asked the
        run, or this one call (by its cancellation token), to stop (store reads)."""
        lease = self.lease
        if lease is not None and lease.lost:
            return True
        store, run_id = self.deps.store, self.request.run_id
        if cancel_requested(store, run_id):
            return True
        names = {self.request.call_id, self.request.cancellation_token} - {""}
        return any(call_cancel_requested(store, run_id, name) is not None for name in names)

    def report(self, stage: Stage, exc: BaseException) -> None:
        """Record that tool code raised ``exc`` at ``stage``: a ``tool.raised`` event and a
        warning on the ``execgraph.executor`` logger, never the result the model reads.

        The tool itself, its read-after-write check and its reconcile probe run code
        execgraph did not write; what they raise reaches the model only as a fixed, typed
        message, so its type, message and traceback would be lost without this record
        (bounded and scrubbed by :mod:`execgraph.state.diagnostics`).
        """
        self._raised[stage] += 1
        n = self._raised[stage]  # a probe may run twice in one attempt (crash, then unknown)
        described = describe(exc)
        tool = self.spec.key
        self.attempt_event(
            EventType.TOOL_RAISED,
            seq=stage if n == 1 else f"{stage}-{n}",
            payload={"stage": stage, "tool": tool, **described},
        )
        _log.warning(
            "%s raised %s in %s (run %s, call %s): %s\n%s",
            tool,
            described["type"],
            stage,
            self.request.run_id,
            self.request.call_id,
            described["message"],
            described["traceback"],
        )
