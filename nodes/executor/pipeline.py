"""The executor pipeline as one node: gate (authorize, approval), then execute.

The whole pipeline is one durability boundary. The node re-runs from its start after an
interrupt or a crash, which is safe because nothing before ``interrupt()`` has a side
effect (the gate is pure but for idempotent event appends) and no side effect starts
before the durable execution record exists (``execute`` reserves first; a record found
started but uncommitted is reconciled, never blindly run again). One node instead of one
per stage means one checkpoint per superstep of parallel calls, not three per call.
"""

from __future__ import annotations

import asyncio
from contextvars import copy_context
from functools import partial
from typing import Any

from nodes.executor.gate import gate_call, needs_approval, preview
from nodes.executor.results import ExecutorDeps
from nodes.executor.run import execute
from state.contracts import ToolExecutionRequest
from state.schema import ExecutorInput

__all__ = ["aexecutor_node", "executor_node", "needs_approval", "preview"]


def executor_node(state: ExecutorInput, *, deps: ExecutorDeps) -> dict[str, Any]:
    """Run one ToolExecutionRequest through every stage; return only reducer fields."""
    request = ToolExecutionRequest.model_validate(state["request"])
    request, gate = gate_call(request, deps)
    return execute(request, gate, deps)


async def aexecutor_node(state: ExecutorInput, *, deps: ExecutorDeps) -> dict[str, Any]:
    """The same node under ``ainvoke``: the pipeline runs on the executor's own call pool.

    LangGraph would run a sync node on the event loop's default executor, which has only
    a few threads (``cpu_count + 4``); ten parallel calls would then run in waves. The
    context is copied so ``interrupt()`` and the stream writer still find the run.
    """
    run = partial(copy_context().run, executor_node, state, deps=deps)
    return await asyncio.get_running_loop().run_in_executor(deps.calls, run)
