"""The activities: advance a run's LangGraph thread to its next pause or its end; look at
a run's records.

Model calls and tool calls run inside the advance, through the same compiled graph,
executor and execution store as on one machine, and :func:`~execgraph.engines.advance.
advance` decides what the thread gets next, as it does for the embedded engine. That is
what makes Temporal's at-least-once activities safe here: an advance that runs again (its
worker died, it timed out) picks the thread up from its last checkpoint, a turn already
answered replays its logged model reply, a call already committed returns its recorded
result, and a call cut off mid-effect is reconciled by its probe, never blindly run
again. The run lease keeps two advances of one run from acting at once.

While the graph runs on a thread of its own, the activity heartbeats; a Temporal cancel
arrives through the heartbeat. Only a cancel the workflow asked for (a person cancelled
the run) is logged as the run's cancel request (the running tool sees it within a poll;
the activity waits for the graph to stop and reports it). Temporal also cancels an
attempt it gave up on — timed out (its worker stopped answering, then woke up), its
workflow gone, its worker shutting down — and that is no one's cancel: the attempt only
stops waiting, and the run goes on where Temporal scheduled it again (the run lease and
the execution records keep the woken attempt from acting twice).

What fails is classified once, here: what a retry can fix (the store busy or briefly
unreachable, another worker still holding the run's lease, a dropped connection) is
raised for Temporal to retry; execgraph's own refusals end the run with their message;
anything else is a bug, which no retry fixes and whose retries would run the run's reads
again: it ends the run at once, its traceback in the worker's log (the ``execgraph``
logger) and in the failure Temporal records.

Which graph a spec gets is the worker's choice alone: its ``graphs`` build it from the
names the operator registered, in a workspace derived from the validated run id.
"""

from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, NoReturn

from temporalio import activity
from temporalio.exceptions import ApplicationError

from execgraph.engines.advance import Step, advance, config_of, view_of
from execgraph.engines.answers import approvals
from execgraph.engines.reading import report_json, trace_of
from execgraph.engines.spec import RunView
from execgraph.engines.temporal.messages import Advance, Look, Reached, RunSpec, carried, cut
from execgraph.engines.temporal.workflow import ADVANCE, BUG, LOOK
from execgraph.engines.waits import expired_answers
from execgraph.nodes.cancel import request_cancel
from execgraph.state.compiled import RunGraph
from execgraph.state.diagnostics import logger
from execgraph.state.errors import ExecGraphError, StoreError, UsageError
from execgraph.state.store.worker import worker_id

__all__ = ["BUG", "CANCELLED_NOTE", "EVENTS_PER_LOOK", "Advancer", "failure"]

_TRACEBACK_CHARS = 8000  # of a bug's traceback, carried in the failure
_log = logger("temporal")

CANCELLED_NOTE = "cancelled through Temporal"

EVENTS_PER_LOOK = 500
"""Events one look answers with (Temporal refuses an answer above a few MB)."""


class Advancer:
    """The activities of a worker, over the graphs ``graph_for`` builds.

    ``graph_for(spec)`` returns the run's compiled graph on the worker's shared state
    (a :class:`~execgraph.engines.temporal.worker.SharedGraphs`, or the operator's own
    function); the worker caches it. ``heartbeat_s`` is how often a running advance
    heartbeats; each of up to ``threads`` advances at once runs on a thread of this
    worker's pool.
    """

    def __init__(
        self, graph_for: Callable[[RunSpec], RunGraph], heartbeat_s: float, threads: int
    ) -> None:
        self._graph_for = graph_for
        self._heartbeat_s = heartbeat_s
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="execgraph-advance")

    @activity.defn(name=ADVANCE)
    async def advance(self, step: Advance) -> Reached:
        """Run ``step`` on a thread, heartbeating; a person's cancel stops the run, not the
        wait; Temporal giving up on this attempt stops only the wait (see the module)."""
        loop = asyncio.get_running_loop()
        beat = asyncio.ensure_future(self._beat(step.spec.run_id))
        try:
            graph = await loop.run_in_executor(self._pool, self._graph_for, step.spec)
            work = loop.run_in_executor(self._pool, _drive, graph, step)
            while True:
                try:
                    return await asyncio.shield(work)
                except asyncio.CancelledError:
                    if work.done() or not _cancelled_by_a_person():
                        raise
                    # The workflow was cancelled: the run stops, the tool sees it.
                    store = graph.run_store  # type: ignore[attr-defined]
                    await asyncio.to_thread(request_cancel, store, step.spec.run_id, CANCELLED_NOTE)
        except Exception as exc:
            _raise(exc)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    @activity.defn(name=LOOK)
    async def look(self, look: Look) -> dict[str, Any]:
        """Read (or, for ``reconcile``, settle) a run's records for a client."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, self._look, look)
        except Exception as exc:
            _raise(exc)

    def _look(self, look: Look) -> dict[str, Any]:
        spec = look.spec
        graph = self._graph_for(spec)
        store = graph.run_store  # type: ignore[attr-defined]
        if look.what == "events":  # a page at a time: Temporal bounds what one answer holds
            after = int(look.args.get("after") or 0)
            page = store.events(spec.run_id)[after : after + EVENTS_PER_LOOK + 1]
            return {
                "events": [e.model_dump(mode="json") for e in page[:EVENTS_PER_LOOK]],
                "more": len(page) > EVENTS_PER_LOOK,
            }
        if look.what == "trace":  # all but the events, which come by pages
            values = graph.get_state(config_of(spec.run_id)).values
            tools = getattr(self._graph_for, "tools", None)
            found = trace_of(store, spec.run_id, values, tools(spec) if tools else None)
            return replace(found, events=[]).to_json()
        if look.what == "approval":  # a pending call's request, every argument in full
            view = view_of(graph, spec.run_id)
            (pending,) = approvals(view, str(look.args.get("call_id")))
            return dict(pending["value"])
        if look.what == "replay":
            replay = getattr(self._graph_for, "replay", None)
            if replay is None:
                raise UsageError("this worker's graphs are not registered by name: no replay")
            return report_json(replay(spec))
        if look.what == "reconcile":
            from execgraph.nodes.executor import reconcile

            args = look.args
            result = reconcile(
                store, spec.run_id, str(args["call_id"]), happened=bool(args["happened"]),
                decided_by=str(args.get("decided_by") or ""), note=str(args.get("note") or ""),
            )  # fmt: skip
            return {"result": result.model_dump(mode="json")}
        if look.what == "clock":  # the store's time: what a wait's deadline is judged by
            return {"now": store.clock()}
        if look.what == "cancel_call":  # one running call: logged where its worker polls
            from execgraph.engines.call_cancel import cancel_call

            args = look.args
            logged = cancel_call(
                store, spec.run_id, str(args["call_id"]), str(args.get("reason") or "")
            )
            return {"logged": logged}
        raise UsageError(f"a worker cannot look at {look.what!r}")

    async def _beat(self, run_id: str) -> None:
        while True:
            activity.heartbeat(run_id)
            await asyncio.sleep(self._heartbeat_s)


def _drive(graph: RunGraph, step: Advance) -> Reached:
    """Advance the thread once, from wherever its checkpoint says it is (at a wait's
    deadline: with the answers that end the waits past it, if any is by the store's clock)."""
    spec = step.spec
    answers = step.answers
    if step.expire:
        view = view_of(graph, spec.run_id)
        answers = expired_answers(view, graph.run_store.clock())  # type: ignore[attr-defined]
        if not answers:
            return _reached(view)
    view = advance(
        graph,
        spec.run_id,
        Step(task=spec.task, answers=answers, cancel=CANCELLED_NOTE if step.cancel else None),
    )
    return _reached(view)


def _reached(view: RunView) -> Reached:
    status = view.status if view.status != "NOT STARTED" else "RUNNING"
    return Reached(
        status=status,
        interrupts=carried(view.interrupts),
        output=cut(view.output),
        error=cut(view.error),
        worker=worker_id(),
    )


def _cancelled_by_a_person() -> bool:
    """Whether this activity's cancel is its workflow's (a person cancelled the run), not
    Temporal giving up on the attempt (timed out, workflow gone, worker shutting down)."""
    details = activity.cancellation_details()
    if details is None:
        return False
    gave_up = details.timed_out or details.not_found or details.worker_shutdown
    return details.cancel_requested and not gave_up


def _raise(exc: Exception) -> NoReturn:
    found = failure(exc)
    if found is exc:
        raise exc
    raise found from exc


def failure(exc: BaseException) -> BaseException:
    """What Temporal is told of an activity that raised ``exc``: itself when a retry can
    fix it, else a non-retryable ``ApplicationError`` (a bug's with its traceback)."""
    if isinstance(exc, StoreError | ConnectionError):
        return exc  # busy, unreachable, a dead host's run lease: another attempt
    if isinstance(exc, ExecGraphError):  # execgraph's refusals are final
        return ApplicationError(exc.message, type=type(exc).__name__, non_retryable=True)
    if isinstance(exc, ApplicationError):
        return exc
    trace = "".join(traceback.format_exception(exc))[-_TRACEBACK_CHARS:]
    _log.error(
        "an advance raised %s (a bug; the run ends, not retried):\n%s", type(exc).__name__, trace
    )
    message = f"{type(exc).__name__}: {exc}"[:2000]
    return ApplicationError(
        f"{message} (a bug: the run ends without a retry; the traceback is in the worker's "
        "log and in this failure's details)",
        trace,
        type=BUG,
        non_retryable=True,
    )
