"""The executor pipeline as one node: gate (authorize, approval), then execute.

The whole pipeline is one durability boundary. The node re-runs from its start after an
interrupt or a crash, which is safe because nothing before ``interrupt()`` has a side
effect (the gate is pure but for idempotent event appends) and no side effect starts
before the durable execution record exists (``execute`` reserves first; a record found
started but uncommitted is reconciled, never blindly run again). One node instead of one
per stage means one checkpoint per superstep of parallel calls, not three per call.

A node input is one request (``{"request": …}``) or a batch of them (``{"batch": […]}``,
see :mod:`nodes.fanout`): a batch gates its calls one after another in the node's own
thread — so any ``interrupt()`` comes in a fixed order, as LangGraph's resume expects —
and runs each gated call's effectful half on the executor's call pool as soon as it
passes, so the tools of a batch run side by side as ToolNode's do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import Future, wait
from contextvars import copy_context
from functools import partial
from typing import Any

from nodes.executor.gate import gate_call, needs_approval, preview
from nodes.executor.results import ExecutorDeps
from nodes.executor.run import execute
from state.contracts import ToolExecutionRequest
from state.reducers import merge_evidence, merge_results
from state.schema import ExecutorInput

__all__ = [
    "aexecutor_node",
    "executor_node",
    "merge_updates",
    "needs_approval",
    "preview",
    "run_calls",
]


def _one(raw: dict[str, Any], deps: ExecutorDeps) -> dict[str, Any]:
    request, gate = gate_call(ToolExecutionRequest.model_validate(raw), deps)
    return execute(request, gate, deps)


def merge_updates(updates: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Several calls' updates as one write, exactly as the reducers would fold them.

    Nothing is windowed here (the channel's reducer does that), so the merge neither
    drops a result nor miscounts an event.
    """
    merged: dict[str, Any] = {}
    for update in updates:
        if "results" in update:
            merged["results"] = merge_results(merged.get("results"), update["results"], window=None)
        if "evidence" in update:
            merged["evidence"] = merge_evidence(
                merged.get("evidence"), update["evidence"], window=None
            )
        if "events" in update:
            recent = merged.setdefault("events", {"recent": []})["recent"]
            recent.extend(update["events"].get("recent", []))
    return merged


def _run_batch(batch: list[dict[str, Any]], deps: ExecutorDeps) -> dict[str, Any]:
    """Gate each call in order here; run every gated call on the call pool at once.

    A call's own refusal is a result, not an exception. An exception (an interrupt, a
    bug) still lets the calls already running finish and commit before it propagates, so
    the node's re-run finds them committed in the store instead of in doubt.
    """
    started: list[Future[dict[str, Any]]] = []
    submit: Callable[..., Future[dict[str, Any]]] = deps.calls.submit
    try:
        for raw in batch:
            request, gate = gate_call(ToolExecutionRequest.model_validate(raw), deps)
            started.append(submit(copy_context().run, execute, request, gate, deps))
    finally:
        wait(started)
    return merge_updates(f.result() for f in started)


def run_calls(requests: list[dict[str, Any]], deps: ExecutorDeps) -> dict[str, Any]:
    """Run requests no rule could pause where the caller is (a ReAct turn), as one update."""
    return _one(requests[0], deps) if len(requests) == 1 else _run_batch(requests, deps)


def executor_node(state: ExecutorInput, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Run one request (or a batch) through every stage; return only reducer fields."""
    if "batch" in state:
        return _run_batch(state["batch"], deps)
    return _one(state["request"], deps)


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
        return await loop.run_in_executor(None, batch)
    one = partial(copy_context().run, _one, state["request"], deps)
    return await loop.run_in_executor(deps.calls, one)
