"""The executor pipeline as one node: gate (authorize, approval), then execute.

The whole pipeline is one durability boundary. The node re-runs from its start after an
interrupt or a crash, which is safe because nothing before ``interrupt()`` has a side
effect (the gate is pure but for idempotent event appends) and no side effect starts
before the durable execution record exists (``execute`` reserves first; a record found
started but uncommitted is waited for while its owner's lease holds, and reconciled, never
blindly run again, once it does not). One node instead of one
per stage means one checkpoint per superstep of parallel calls, not three per call.

A node input is one request (``{"request": …}``) or a batch of them (``{"batch": […]}``,
see :mod:`execgraph.nodes.batching`): a batch gates its calls one after another in the node's own
thread — so any ``interrupt()`` comes in a fixed order, as LangGraph's resume expects —
then reserves the gated calls' execution records in one store transaction and runs their
effectful halves on the executor's call pool at once, so the tools of a batch run side by
side as ToolNode's do. (Ten calls each reserving on their own queue on the store's lock:
their tools would start a millisecond or more apart.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Future, wait
from contextvars import copy_context
from functools import partial
from typing import Any

from execgraph.nodes.budget import tool_charge
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.effects import execute, run_staged, stage
from execgraph.nodes.executor.gate import gate_call, needs_approval, preview
from execgraph.nodes.executor.messages import tool_message
from execgraph.nodes.executor.progress import running
from execgraph.nodes.executor.reserve import reserve_together
from execgraph.nodes.executor.stages import Finished, Staged
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import Event
from execgraph.state.schema import ExecutorInput, ExecutorOutput
from execgraph.state.store.base import Reservation
from execgraph.state.updates import merge

__all__ = [
    "aexecutor_node",
    "calls_update",
    "executor_node",
    "needs_approval",
    "preview",
    "run_calls",
]


def _one(raw: dict[str, Any], deps: ExecutorDeps, log: Sequence[Event] = ()) -> Finished:
    request, gate = gate_call(ToolExecutionRequest.model_validate(raw), deps)
    if gate.cleared is None:  # refused: it never runs
        return execute(request, gate, deps, log)
    with running(request):
        return execute(request, gate, deps, log)


def _watched(staged: Staged, deps: ExecutorDeps, reservation: Reservation | None) -> Finished:
    with running(staged.request):
        return run_staged(staged, deps, reservation)


def _update(finished: Finished, deps: ExecutorDeps) -> dict[str, Any]:
    result = finished.result
    dumped = result.model_dump(mode="json")
    update: dict[str, Any] = {
        "results": {result.call_id: dumped},
        "events": {"recent": list(finished.event_ids)},
    }
    message = tool_message(dumped, deps.observation_chars)
    if message is not None:  # the model's call, answered as the model will see it
        update["messages"] = [message]
    if result.evidence:  # an empty update would still be a checkpoint write
        update["evidence"] = {e.source_id: e.model_dump(mode="json") for e in result.evidence}
    cost = tool_charge(result, deps.registry)  # a call that ran costs what its tool declares
    if cost is not None:
        update["budget"] = cost
    return update


def calls_update(finished: Sequence[Finished], deps: ExecutorDeps) -> dict[str, Any]:
    """Finished calls as one node update: reducer fields only (results, events, evidence,
    the budget their tools' declared costs charge, and one ToolMessage per call the model
    asked for)."""
    if len(finished) == 1:
        return _update(finished[0], deps)
    return merge((_update(f, deps) for f in finished), ExecutorOutput)


def _run_batch(
    batch: list[dict[str, Any]], deps: ExecutorDeps, log: Sequence[Event] = ()
) -> list[Finished]:
    """Gate each call in order here; reserve the gated calls' records in one transaction
    (with ``log``, unless a refusal logged it first) and run them all on the call pool.

    A call's own refusal is a result, not an exception. An exception while gating (an
    interrupt, a bug) still runs the calls gated before it and lets them commit before it
    propagates, so the node's re-run finds them committed in the store, not in doubt.
    """
    slots: list[Staged | Finished] = []
    started: dict[int, Future[Finished]] = {}
    try:
        for raw in batch:
            request, gate = gate_call(ToolExecutionRequest.model_validate(raw), deps)
            slots.append(stage(request, gate, deps, log))
            if not isinstance(slots[-1], Staged):
                log = ()  # the refusal was logged after it
    finally:
        ready = {i: s for i, s in enumerate(slots) if isinstance(s, Staged)}
        held = reserve_together(deps.store, list(ready.values()), log)
        for (i, staged), reservation in zip(ready.items(), held, strict=True):
            run = partial(_watched, staged, deps, reservation)
            started[i] = deps.calls.submit(copy_context().run, run)
        wait(started.values())
    return [started[i].result() if isinstance(s, Staged) else s for i, s in enumerate(slots)]


def run_calls(
    requests: list[dict[str, Any]], deps: ExecutorDeps, log: Sequence[Event] = ()
) -> list[Finished]:
    """Run requests no rule could pause where the caller is (a ReAct turn), in order.

    ``log`` (the turn's model reply and decisions) is written with the calls' first store
    write — their reservation, or a refusal — so it is in the store before any call runs
    and costs no transaction of its own.
    """
    if len(requests) == 1:
        return [_one(requests[0], deps, log)]
    return _run_batch(requests, deps, log)


def executor_node(state: ExecutorInput, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Run one request (or a batch) through every stage; return only reducer fields."""
    if "batch" in state:
        return calls_update(_run_batch(state["batch"], deps), deps)
    return _update(_one(state["request"], deps), deps)


async def aexecutor_node(state: ExecutorInput, *, deps: ExecutorDeps) -> dict[str, Any]:
    """The same node under ``ainvoke``, off the event loop.

    A single call runs on the executor's own call pool: LangGraph would run a sync node
    on the loop's default executor, which has only ``cpu_count + 4`` threads, so ten
    parallel calls would run in waves. A batch's gating thread waits on that pool, so it
    runs on the default executor instead (a pool never waits on itself). The context is
    copied so ``interrupt()`` and the stream writer still find the run.
    """
    loop = asyncio.get_running_loop()
    if "batch" in state:
        batch = partial(copy_context().run, _run_batch, state["batch"], deps)
        return calls_update(await loop.run_in_executor(None, batch), deps)
    one = partial(copy_context().run, _one, state["request"], deps)
    return _update(await loop.run_in_executor(deps.calls, one), deps)
