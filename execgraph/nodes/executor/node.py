"""The executor as a LangGraph node: one request or a batch, under ``invoke`` or ``ainvoke``.

The whole pipeline (:mod:`execgraph.nodes.executor.pipeline`) is one durability boundary:
one node instead of one per stage means one checkpoint per superstep of parallel calls,
not three per call. The node returns only reducer fields, so parallel calls never
collide: each call's result, its events' ids, its evidence, the budget its tool declares,
and the ``ToolMessage`` answering the model's call.

A node input is one request (``{"request": …}``) or a batch of them (``{"batch": […]}``,
see :mod:`execgraph.nodes.batching`): a batch gates its calls one after another in the
node's own thread — so any ``interrupt()`` comes in a fixed order, as LangGraph's resume
expects — then reserves the gated calls' execution records in one store transaction and
runs their effectful halves on the executor's call pool at once, so the tools of a batch
run side by side as ToolNode's do. (Ten calls each reserving on their own queue on the
store's lock: their tools would start a millisecond or more apart.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Future, wait
from contextvars import copy_context
from functools import partial
from typing import Any

from execgraph.nodes.budget import tool_charge
from execgraph.nodes.executor.call import Call
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.messages import tool_message
from execgraph.nodes.executor.pipeline import admit, gate, run
from execgraph.nodes.executor.stages.commit import Finished
from execgraph.nodes.executor.stages.reserve import reserve_together
from execgraph.nodes.executor.threads.progress import running
from execgraph.state.events import Event
from execgraph.state.schema import ExecutorInput, ExecutorOutput
from execgraph.state.store.base import Reservation
from execgraph.state.updates import merge

__all__ = ["aexecutor_node", "calls_update", "executor_node", "run_calls"]


def _one(raw: dict[str, Any], deps: ExecutorDeps, log: Sequence[Event] = ()) -> Finished:
    call = Call.of(raw, deps)
    gate(call)
    if call.cleared is None:  # refused: it never runs
        refused = admit(call, log)
        assert refused is not None
        return refused
    with running(call.request):
        refused = admit(call, log)
        return refused if refused is not None else run(call, log=log)


def _watched(call: Call, reservation: Reservation | None) -> Finished:
    with running(call.request):
        return run(call, reservation)


def _update(finished: Finished, deps: ExecutorDeps) -> dict[str, Any]:
    result = finished.result
    dumped = finished.dumped if finished.dumped is not None else result.model_dump(mode="json")
    update: dict[str, Any] = {
        "results": {result.call_id: dumped},
        "events": {"recent": list(finished.event_ids)},
    }
    message = tool_message(dumped, deps.observation_chars)
    if message is not None:  # the model's call, answered as the model will see it
        update["messages"] = [message]
    if result.evidence:  # an empty update would still be a checkpoint write
        update["evidence"] = {e.source_id: e.model_dump(mode="json") for e in result.evidence}
    # a call that ran costs what its resolved tool declares
    cost = tool_charge(result, finished.spec.cost_usd if finished.spec is not None else 0.0)
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
    """Gate each call in order here; reserve the admitted calls' records in one
    transaction (with ``log``, unless a refusal logged it first) and run them all on the
    call pool.

    A call's own refusal is a result, not an exception. An exception while gating (an
    interrupt, a bug) still runs the calls admitted before it and lets them commit before
    it propagates, so the node's re-run finds them committed in the store, not in doubt.
    """
    slots: list[Call | Finished] = []
    started: dict[int, Future[Finished]] = {}
    try:
        for raw in batch:
            call = Call.of(raw, deps)
            gate(call)
            refused = admit(call, log)
            slots.append(call if refused is None else refused)
            if refused is not None:
                log = ()  # the refusal was logged after it
    finally:
        ready = {i: s for i, s in enumerate(slots) if isinstance(s, Call)}
        try:
            held = reserve_together(deps.store, list(ready.values()), log)
            for (i, call), reservation in zip(ready.items(), held, strict=True):
                run_one = partial(_watched, call, reservation)
                started[i] = deps.calls.submit(copy_context().run, run_one)
        finally:
            for i, call in ready.items():
                if i not in started and call.lease is not None:
                    call.lease.release()  # never ran: its attempt is over
        wait(started.values())
    return [started[i].result() if isinstance(s, Call) else s for i, s in enumerate(slots)]


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
