"""A run as a Temporal workflow: advance the graph, wait for a person, advance again.

The workflow holds no run state of its own: each advance is one activity that drives the
run's LangGraph thread on shared state (PostgreSQL, or one machine's SQLite) to its next
pause or its end, and reports where it got. What the run did is in execgraph's execution
store and checkpoints; Temporal holds the schedule (which advance runs where, retried on
another worker when one dies) and the people's answers, which arrive as the ``decide``
update and are accepted only when they are signed with the workers' approval key
(:mod:`execgraph.engines.temporal.approvers`), name the pending interrupts, and are bound
to the arguments each pending call has now.

A Temporal cancel reaches the running advance (its heartbeat delivers it), which logs a
cancel request in the store; the running tool sees it within a poll and the run stops
CANCELLED. A run paused for a person is ended by one more advance that refuses the
pending calls. A run that ended CANCELLED so ends its workflow as Temporal's own
Canceled (its status query still answers with the run's final :class:`Reached`); any
other end is the workflow's result.

A paused run also waits with a timer: at the first of its waits' deadlines
(:mod:`execgraph.state.waits`) it advances by itself, and the worker ends the waits past
their deadline (by the store's clock) by their expiry policy, with no signal from anyone.

A look (:class:`ExecgraphLook`) is a short workflow of its own: one activity on a worker
reads a run's records (its trace, a replay) or records a person's verdict on a call, so
a client reaches every run through Temporal alone, finished runs included.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from execgraph.engines.answers import binding_problem, interrupt_kind
    from execgraph.engines.temporal.approvers import DECIDE, approver_of
    from execgraph.engines.temporal.messages import (
        Advance,
        Decision,
        Look,
        Reached,
        RunSpec,
        RunView,
    )
    from execgraph.engines.waits import earliest_deadline

__all__ = ["ADVANCE", "BUG", "LOOK", "ExecgraphLook", "ExecgraphRun", "Timing"]

ADVANCE = "execgraph.advance"
"""The activity's name: workers register it, the workflow schedules it by name."""

LOOK = "execgraph.look"
"""The activity (and workflow) that reads a run's records for a client."""

BUG = "Bug"
"""The failure type of an advance that raised what execgraph does not raise: a bug, which
ends the run at once (a retry would only run its reads again)."""

_WAIT_TIMERS = "wait-deadline-timers"  # workflows started before waited without a timer
_PAST_DEADLINE_S = 0.5  # the timer fires this long after a deadline (clocks differ a little)
_MAX_ADVANCES = 1000  # a run pauses for people this often at most; more is a loop
_ATTEMPTS = 100  # per advance: dead workers and busy stores (a bug is never retried)


class Timing:
    """How long an advance may take and how soon a silent worker is given up on.

    A worker heartbeats every ``heartbeat / 3``; one that misses ``heartbeat`` is taken
    for dead and its advance runs again on another worker, picking the run up from its
    last checkpoint. ``advance`` bounds one advance (the run's own deadline is the
    contract's, enforced inside the graph); ``look`` one reading of a run's records.
    """

    advance = timedelta(hours=2)
    heartbeat = timedelta(seconds=10)
    look = timedelta(minutes=10)


@workflow.defn(name="execgraph.run")
class ExecgraphRun:
    """One execgraph run (workflow id = run id)."""

    def __init__(self) -> None:
        self._reached = Reached(status="PENDING")
        self._answers: dict[str, object] | None = None
        self._advances = 0
        self._spec: RunSpec | None = None

    @workflow.run
    async def run(self, spec: RunSpec, heartbeat_s: float = 0.0) -> Reached:
        self._spec = spec
        if spec.run_id != workflow.info().workflow_id:  # the run id is the workflow id
            self._reached = Reached(
                status="FAILED", error="the spec's run id is not the workflow's id"
            )
            return self._reached
        heartbeat = timedelta(seconds=heartbeat_s) if heartbeat_s else Timing.heartbeat
        step = Advance(spec)
        try:
            while self._advances < _MAX_ADVANCES:
                self._reached = await self._advance(step, heartbeat)
                if self._reached.ended:
                    return self._reached
                if not self._reached.interrupts:
                    step = Advance(spec)  # stopped short of its end: advance it again
                    continue
                if not await self._answered():
                    step = Advance(spec, expire=True)  # a deadline passed: its policy applies
                    continue
                step = Advance(spec, answers=self._answers)
                self._answers = None
            return Reached(
                status="FAILED",
                error=f"the run did not end within {_MAX_ADVANCES} advances",
                interrupts=[],
            )
        except (asyncio.CancelledError, CancelledError):
            # Cancelled while waiting for a person (or the running advance already ended
            # the run CANCELLED): one more advance makes sure the record says so.
            end = asyncio.ensure_future(self._advance(Advance(spec, cancel=True), heartbeat))
            self._reached = await asyncio.shield(end)
            if self._reached.status == "CANCELLED":
                raise  # Temporal shows it as what it is: Canceled
            return self._reached  # it ended otherwise before the cancel reached it

    async def _answered(self) -> bool:
        """Wait for answers, until the first deadline of the run's waits (False: it came
        first). Deadlines are the store's clock; the timer runs a little past, so the
        worker's clock sees it passed (one that does not yet waits again)."""
        until = earliest_deadline(self._reached.interrupts)
        if until is None or not workflow.patched(_WAIT_TIMERS):
            await workflow.wait_condition(lambda: self._answers is not None)
            return True
        left = max(until - workflow.time(), 0.0) + _PAST_DEADLINE_S
        try:
            await workflow.wait_condition(
                lambda: self._answers is not None, timeout=left, timeout_summary="wait deadline"
            )
        except TimeoutError:
            self._reached = Reached(status="RUNNING")  # answers wait for the expiry's advance
            return False
        return True

    async def _advance(self, step: Advance, heartbeat: timedelta) -> Reached:
        self._advances += 1
        try:
            reached: Reached = await workflow.execute_activity(
                ADVANCE,
                step,
                result_type=Reached,
                start_to_close_timeout=Timing.advance,
                heartbeat_timeout=heartbeat,
                cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(milliseconds=200),
                    backoff_coefficient=2.0,
                    maximum_interval=timedelta(seconds=5),
                    maximum_attempts=_ATTEMPTS,
                ),
            )
        except ActivityError as exc:
            if isinstance(exc.cause, CancelledError):
                raise exc.cause from None
            cause = exc.cause
            message = cause.message if isinstance(cause, ApplicationError) else str(cause)
            if isinstance(cause, ApplicationError) and cause.type == BUG and cause.details:
                message = f"{message}\n{cause.details[0]}"  # the traceback, for the developer
            return Reached(status="FAILED", error=message or str(exc))
        return reached

    @workflow.update(name=DECIDE)
    def decide(self, decision: Decision) -> RunView:
        """Answer the pending interrupts; the run goes on with the next advance. Each
        approval's approver is the name the answers were signed with."""
        approver = approver_of(decision.token)
        kinds = {str(i.get("id")): interrupt_kind(i.get("value")) for i in self._reached.interrupts}
        self._answers = {
            key: {**answer, "approver": approver}
            if kinds.get(key) == "approval" and isinstance(answer, dict)
            else answer
            for key, answer in decision.answers.items()
        }
        # Answered: a second decision is refused until the run pauses again.
        self._reached = Reached(status="RUNNING")
        return self.status()

    @decide.validator
    def _check_decision(self, decision: Decision) -> None:
        pending = {str(i.get("id")) for i in self._reached.interrupts}
        if not pending:
            raise ApplicationError(
                f"run {workflow.info().workflow_id!r} is not waiting for a decision "
                f"(status {self._reached.status})",
                type="NotWaiting",
            )
        problem = binding_problem(self._reached.interrupts, decision.answers)
        if problem:
            raise ApplicationError(problem, type="UnknownInterrupt")

    @workflow.query(name="status")
    def status(self) -> RunView:
        """Where the run is and what waits on a person (no history is written)."""
        r = self._reached
        return RunView(
            run_id=workflow.info().workflow_id,
            status=r.status,
            interrupts=list(r.interrupts),
            advances=self._advances,
            output=r.output,
            error=r.error,
            spec=self._spec,
        )


@workflow.defn(name=LOOK)
class ExecgraphLook:
    """One look at a run's records, answered by a worker (workflow id: a fresh one)."""

    @workflow.run
    async def run(self, look: Look) -> dict[str, Any]:
        answer: dict[str, Any] = await workflow.execute_activity(
            LOOK,
            look,
            result_type=dict,
            start_to_close_timeout=Timing.look,
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        return answer
