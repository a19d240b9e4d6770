"""``TemporalEngine``: the :class:`~execgraph.engines.runs.Runs` of runs on Temporal.

A synchronous face over :class:`~execgraph.engines.temporal.client.TemporalRuns`, on an
event loop of its own, so the command line (or any caller) reaches a Temporal run
exactly as it reaches an embedded one. The run is held by the workers, never by this
process: starting or answering *follows* the run by polling its workflow's status until
it ends or waits for a person (answering what ``answerer`` answers), and leaves it to the
workers when it stops following. Reads (trace, replay) are answered by a worker from the
run's records.

Temporal's refusals (an unreachable server, an unknown namespace or run, a run id already
used) become one-line :class:`~execgraph.state.errors.UsageError`\\ s, and a query that no
worker answers is reported after a bound, never waited on forever.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from execgraph.engines.answers import check_answers
from execgraph.engines.runs import Answerer, RunRow
from execgraph.engines.spec import Answers, RunSpec, RunView
from execgraph.state.errors import CliError, UsageError

if TYPE_CHECKING:
    from execgraph.engines.temporal.client import TemporalRuns

__all__ = ["ANSWER_S", "FOLLOW_S", "TemporalEngine", "reachable"]

_T = TypeVar("_T")

ANSWER_S = 30.0
"""How long a query or update may wait for a worker: longer means no worker polls the
task queue (or none is alive), which is reported, not waited on forever."""

LOOK_S = 600.0
"""How long a worker may take to read a run's records (a replay re-runs its control)."""

FOLLOW_S = 3600.0
"""How long one call follows a run before it leaves it to the workers (the run itself is
not bounded by this)."""

_POLL_S = (0.05, 1.0)  # first and longest pause between two status queries
DEFAULT_NAMESPACE = "default"


def reachable(address: str) -> None:
    """A UsageError unless something listens at ``address`` (HOST:PORT).

    Checked with a plain socket before the SDK connects: a failed SDK connect leaves
    threads behind that can crash the interpreter as it exits (seen with temporalio 1.x).
    """
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--address {address!r} is not HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"cannot reach the Temporal server at {address}: {reason}") from None


class TemporalEngine:
    """Runs on one Temporal server, namespace and task queue (see the module).

    ``watch("status", view)`` sees each new status while a run is followed; answers are
    signed with ``approval_key``, the workers' key (see
    :class:`~execgraph.engines.temporal.client.TemporalRuns`).
    """

    def __init__(
        self,
        address: str,
        *,
        task_queue: str,
        namespace: str = DEFAULT_NAMESPACE,
        watch: Callable[[str, Any], None] | None = None,
        follow_s: float = FOLLOW_S,
        approval_key: bytes | None = None,
    ) -> None:
        self.address = address
        self.task_queue = task_queue
        self.namespace = namespace
        self.watch = watch
        self.follow_s = follow_s
        self.approval_key = approval_key
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runs: TemporalRuns | None = None

    @property
    def flags(self) -> str:
        """What a printed follow-up command needs to reach the same runs."""
        parts = ["--engine", "temporal", "--address", self.address]
        parts += ["--task-queue", self.task_queue]
        if self.namespace != DEFAULT_NAMESPACE:
            parts += ["--namespace", self.namespace]
        return " " + " ".join(shlex.quote(p) for p in parts)

    @property
    def where(self) -> str:
        """Where these runs are, in words."""
        return f"on Temporal at {self.address} (namespace {self.namespace})"

    # ------------------------------------------------------------------ talking to it

    def _call(self, go: Callable[[TemporalRuns], Awaitable[_T]]) -> _T:
        """Run ``go(runs)`` on this engine's loop; Temporal's failures become one line.

        The error is raised only once the loop is idle, built fresh (no traceback holding
        the client): a Temporal client freed while Python shuts down aborts it.
        """
        if self._loop is None:
            reachable(self.address)
            self._loop = asyncio.new_event_loop()
        outcome = self._loop.run_until_complete(self._guarded(go))
        if isinstance(outcome, _Failed):
            raise outcome.error
        return outcome

    async def _guarded(self, go: Callable[[TemporalRuns], Awaitable[_T]]) -> _T | _Failed:
        if self._runs is None:
            from execgraph.engines.temporal.client import TemporalRuns

            try:
                self._runs = await TemporalRuns.connect(
                    self.address,
                    task_queue=self.task_queue,
                    namespace=self.namespace,
                    approval_key=self.approval_key,
                )
            except RuntimeError as exc:  # the SDK's "Failed client connect: ..."
                message = f"cannot reach the Temporal server at {self.address}: {exc}"
                return _Failed(UsageError(message))
        try:
            return await go(self._runs)
        except UsageError as exc:
            return _Failed(CliError(str(exc), code=getattr(exc, "code", 2)))
        except Exception as exc:
            found = self._translated(exc)
            if found is None:
                raise
            return _Failed(found)

    def _translated(self, exc: Exception) -> UsageError | None:
        """Temporal's refusals as bad input (None: an internal error)."""
        from temporalio.client import WorkflowFailureError
        from temporalio.exceptions import (
            ActivityError,
            ApplicationError,
            WorkflowAlreadyStartedError,
        )
        from temporalio.service import RPCError, RPCStatusCode

        if isinstance(exc, WorkflowFailureError):  # a look the worker refused
            cause = exc.cause.cause if isinstance(exc.cause, ActivityError) else exc.cause
            if isinstance(cause, ApplicationError):
                return UsageError(f"the worker refused: {cause.message}")
        if isinstance(exc, WorkflowAlreadyStartedError):
            return UsageError(
                f"run {exc.workflow_id!r} already exists on Temporal (a run id is used once); "
                "give another --run-id"
            )
        if isinstance(exc, RPCError) and "namespace" in exc.message.lower():
            return UsageError(
                f"Temporal at {self.address} refused namespace {self.namespace!r}: {exc.message}"
            )
        if isinstance(exc, RPCError) and exc.status == RPCStatusCode.NOT_FOUND:
            return UsageError(f"Temporal knows no such run: {exc.message}")
        if isinstance(exc, RPCError):
            return UsageError(f"Temporal refused: {exc.message}")
        return None

    async def _ask(self, call: Awaitable[_T], bound: float = ANSWER_S) -> _T:
        """A query, update or look, bounded: one no worker answers is reported."""
        try:
            return await asyncio.wait_for(call, bound)
        except TimeoutError:
            raise CliError(
                f"no worker answered within {bound:g} s on task queue {self.task_queue!r} "
                f"at {self.address}; start one with: execgraph worker --task-queue "
                f"{shlex.quote(self.task_queue)} --address {self.address}",
                code=1,
            ) from None

    def close(self) -> None:
        """Forget the client (its loop stays until the process ends: see the module)."""
        self._runs = None

    # ------------------------------------------------------------------ Runs

    def check(self, spec: RunSpec) -> None:
        """Refuse a spec no worker could start: an unknown architecture, a run id that is
        no safe file name (the workers refuse an unknown tool set)."""
        from execgraph.graph.build import ARCHITECTURES
        from execgraph.state.home import check_run_id

        if spec.arch not in ARCHITECTURES:
            raise UsageError(
                f"unknown architecture {spec.arch!r}; choose one of {', '.join(ARCHITECTURES)}"
            )
        check_run_id(spec.run_id)

    def start(self, spec: RunSpec, *, answerer: Answerer | None = None) -> RunView:
        """Start ``spec`` on the workers and follow it (see the module)."""

        async def go(runs: TemporalRuns) -> RunView:
            await runs.start(spec)
            if self.watch is not None:
                self.watch("started", RunView(spec.run_id, "RUNNING", spec=spec))
            return await self._follow(runs, spec.run_id, answerer, frozenset())

        return self._call(go)

    def answer(self, run_id: str, answers: Answers, *, answerer: Answerer | None = None) -> RunView:
        """Answer the run's pending interrupts, then follow it."""

        async def go(runs: TemporalRuns) -> RunView:
            view = await self._ask(runs.status(run_id))
            check_answers(view, answers)
            await self._ask(runs.decide(run_id, dict(answers)))
            return await self._follow(runs, run_id, answerer, view.pending())

        return self._call(go)

    def resume(self, run_id: str, *, answerer: Answerer | None = None) -> RunView:
        """A run on Temporal is continued by its workers: only its questions are answered
        from here (``answer``), and its waits past their deadline (the store's clock, read
        by a worker) ended by their expiry policy."""
        from execgraph.engines.waits import expired_answers

        view = self.status(run_id)
        if view.waiting:
            answers = expired_answers(view, float(self._look(run_id, "clock")["now"]))
            if answers:
                return self.answer(run_id, answers, answerer=answerer)
        raise UsageError("a run on Temporal is continued by its workers: give --answer")

    def cancel(  # Temporal says why a run was cancelled
        self, run_id: str, reason: str = "", *, call_id: str | None = None
    ) -> RunView:
        """Cancel the run's workflow (its running tool sees it) and wait for its end.

        With ``call_id``, only that call: a worker logs its cancel in the run's store
        (the worker running it polls there), and the run goes on; a call pending
        approval is refused instead, as a person's answer would be."""
        if call_id is not None:
            from execgraph.engines.call_cancel import approval_refusal, pending_approval

            waiting = pending_approval(self.status(run_id).interrupts, call_id)
            if waiting is not None:
                return self.answer(run_id, {waiting: approval_refusal(reason)})
            self._look(run_id, "cancel_call", call_id=call_id, reason=reason)
            return self.status(run_id)

        async def go(runs: TemporalRuns) -> RunView:
            view = await self._ask(runs.status(run_id))
            if view.ended:
                return view
            await runs.cancel(run_id)
            try:
                reached = await asyncio.wait_for(runs.result(run_id), self.follow_s)
            except TimeoutError:
                return await self._ask(runs.status(run_id))
            return RunView(
                run_id, reached.status, output=reached.output, error=reached.error,
                spec=view.spec,
            )  # fmt: skip

        return self._call(go)

    def status(self, run_id: str) -> RunView:
        """The run's workflow's own view of it."""
        return self._call(lambda runs: self._ask(runs.status(run_id)))

    def approval(self, run_id: str, call_id: str) -> dict[str, Any]:
        """The pending approval of ``call_id`` with every argument (read by a worker)."""
        return self._look(run_id, "approval", call_id=call_id)

    def events(self, run_id: str, after: int = 0) -> list[Any]:
        """The run's logged events (read by a worker), from the ``after``-th on."""
        from execgraph.state.events import Event

        events: list[Any] = []
        while True:  # a page per look
            found = self._look(run_id, "events", after=after + len(events))
            events += [Event.model_validate(e) for e in found["events"]]
            if not found.get("more"):
                return events

    def trace(self, run_id: str) -> Any:
        """The run's events, evidence and final state (read by a worker)."""
        from dataclasses import replace

        from execgraph.engines.reading import RunTrace

        found = RunTrace.from_json(self._look(run_id, "trace"))
        return replace(found, events=self.events(run_id))

    def replay(self, run_id: str) -> Any:
        """Replay the recorded run on a worker (no model call, no effect)."""
        from execgraph.engines.reading import replay_report

        return replay_report(self._look(run_id, "replay"))

    def reconcile(
        self, run_id: str, call_id: str, *, happened: bool, decided_by: str, note: str = ""
    ) -> Any:
        """Record a person's verdict on a call whose outcome is unknown (by a worker)."""
        from execgraph.state.contracts import ToolResult

        found = self._look(
            run_id, "reconcile", call_id=call_id, happened=happened, decided_by=decided_by,
            note=note,
        )  # fmt: skip
        return ToolResult.model_validate(found["result"])

    def runs(self) -> list[RunRow]:
        """Every run of this task queue, oldest first."""
        return self._call(lambda runs: self._ask(runs.list(), LOOK_S))

    def _look(self, run_id: str, what: str, **args: Any) -> dict[str, Any]:
        async def go(runs: TemporalRuns) -> dict[str, Any]:
            await self._ask(runs.status(run_id))  # a worker answers at all, and the run exists
            return await self._ask(runs.look(run_id, what, **args), LOOK_S)

        return self._call(go)

    # ------------------------------------------------------------------ following

    async def _follow(
        self,
        runs: TemporalRuns,
        run_id: str,
        answerer: Answerer | None,
        answered: frozenset[str],
    ) -> RunView:
        """Poll the run until it ends or waits for a person ``answerer`` leaves waiting.

        ``answered`` are the pending interrupt ids when this process last answered: until
        the next advance reports, the workflow may still show that pause.
        """
        deadline = time.monotonic() + self.follow_s
        pause, shown = _POLL_S[0], ""
        view = RunView(run_id, "RUNNING")
        while time.monotonic() < deadline:
            view = await self._ask(runs.status(run_id))
            waiting = view.waiting and view.pending() != answered
            if view.status != shown and (waiting or view.status != "WAITING"):
                shown = view.status
                if self.watch is not None:
                    self.watch("status", view)
            if view.ended:
                return view
            if waiting:
                answers = answerer(view) if answerer is not None else None
                if not answers:
                    return view
                await self._ask(runs.decide(run_id, dict(answers)))
                answered, shown, pause = view.pending(), "", _POLL_S[0]
                continue
            await asyncio.sleep(pause)
            pause = min(pause * 2, _POLL_S[1])
        return view


class _Failed:
    """A failure carried out of the event loop, to be raised once it is idle."""

    def __init__(self, error: UsageError) -> None:
        self.error = error
