"""The one activity: drive a run's LangGraph thread to its next pause or its end.

Model calls and tool calls run inside it, through the same compiled graph, executor and
execution store as on one machine. That is what makes Temporal's at-least-once activities
safe here: an advance that runs again (its worker died, it timed out) picks the thread up
from its last checkpoint, a turn already answered replays its logged model reply, a call
already committed returns its recorded result, and a call cut off mid-effect is
reconciled by its probe, never blindly run again. The run lease keeps two advances of one
run from acting at once.

While the graph runs on a thread of its own, the activity heartbeats; a Temporal cancel
arrives through the heartbeat, is logged as the run's cancel request (the running tool
sees it within a poll), and the activity waits for the graph to stop and reports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langgraph.types import Command
from temporalio import activity
from temporalio.exceptions import ApplicationError

from execgraph.nodes.cancel import request_cancel
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import ExecGraphError, StoreError
from execgraph.state.store.worker import worker_id
from execgraph.temporal.messages import TERMINAL, Advance, Reached, RunSpec
from execgraph.temporal.workflow import ADVANCE

__all__ = ["Advancer", "refusal"]

CANCELLED_NOTE = "cancelled through Temporal"


def refusal(value: Any) -> dict[str, Any]:
    """The resume value that ends one pending interrupt of a cancelled run: a question
    gets a note, an approval a refusal (worded as a cancel, not a person's no)."""
    if isinstance(value, dict) and value.get("kind") == "question":
        return {"answer": f"({CANCELLED_NOTE})"}
    return {"action": "reject", "reason": CANCELLED_NOTE, "approver": "execgraph cancel"}


class Advancer:
    """The ``execgraph.advance`` activity of a worker, over the graphs ``graph_for`` builds.

    ``graph_for(spec)`` returns the run's compiled graph on the worker's shared state; the
    worker caches it. ``heartbeat_s`` is how often a running advance heartbeats; each of
    up to ``threads`` advances at once runs its graph on a thread of this worker's pool.
    """

    def __init__(
        self, graph_for: Callable[[RunSpec], RunGraph], heartbeat_s: float, threads: int
    ) -> None:
        self._graph_for = graph_for
        self._heartbeat_s = heartbeat_s
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="execgraph-advance")

    @activity.defn(name=ADVANCE)
    async def advance(self, step: Advance) -> Reached:
        """Run ``step`` on a thread, heartbeating; a cancel stops the run, not the wait."""
        loop = asyncio.get_running_loop()
        beat = asyncio.ensure_future(self._beat(step.spec.run_id))
        try:
            graph = await loop.run_in_executor(self._pool, self._graph_for, step.spec)
            work = loop.run_in_executor(self._pool, _drive, graph, step)
            while True:
                try:
                    return await asyncio.shield(work)
                except asyncio.CancelledError:
                    if work.done():
                        raise
                    # Temporal cancelled the activity: the run stops, the tool sees it.
                    store = graph.run_store  # type: ignore[attr-defined]
                    await asyncio.to_thread(request_cancel, store, step.spec.run_id, CANCELLED_NOTE)
        except StoreError:
            raise  # busy or briefly unreachable (a dead host's run lease): another attempt
        except ExecGraphError as exc:  # anything else of execgraph's is final
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def _beat(self, run_id: str) -> None:
        while True:
            activity.heartbeat(run_id)
            await asyncio.sleep(self._heartbeat_s)


def _drive(graph: RunGraph, step: Advance) -> Reached:
    """Advance the thread once, from wherever its checkpoint says it is."""
    spec = step.spec
    config: Any = {"configurable": {"thread_id": spec.run_id}}
    state = graph.get_state(config)
    pending = {i.id: i.value for i in state.interrupts}
    inp: Any
    if step.cancel:
        request_cancel(graph.run_store, spec.run_id, CANCELLED_NOTE)  # type: ignore[attr-defined]
        if not state.values:
            inp = {"task": spec.task}  # the verifier ends it CANCELLED at once
        elif pending:
            inp = Command(resume={k: refusal(v) for k, v in pending.items()})
        elif _status(state.values) in TERMINAL:
            return _reached(graph, config)
        else:
            inp = None
    elif not state.values:
        inp = {"task": spec.task}
    elif pending:
        answers = step.answers or {}
        if not answers or not set(answers) <= set(pending):
            return _reached(graph, config)  # still (or newly) waiting for a person
        inp = Command(resume=answers)
    elif not state.next and _status(state.values) in TERMINAL:
        return _reached(graph, config)  # a retried advance whose first attempt finished
    else:
        inp = None  # killed between steps: continue from the last checkpoint
    graph.invoke(inp, config)
    return _reached(graph, config)


def _status(values: dict[str, Any]) -> str:
    return str(values.get("status") or "RUNNING")


def _reached(graph: RunGraph, config: Any) -> Reached:
    state = graph.get_state(config)
    values = state.values or {}
    interrupts = [{"id": i.id, **_shown(i.value)} for i in state.interrupts]
    status = "WAITING" if interrupts else _status(values)
    return Reached(
        status=status,
        interrupts=interrupts,
        output=str(values.get("output") or ""),
        error=_message(values.get("error")),
        worker=worker_id(),
    )


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error, default=str))
    return str(error or "")


def _shown(value: Any) -> dict[str, Any]:
    """An interrupt's value as JSON the workflow can carry (what JSON cannot hold, as text)."""
    plain = json.loads(json.dumps(value, default=str))
    return {"value": plain if isinstance(plain, dict) else {"text": str(plain)}}
