"""Stage 7 — invoke: run the adapter with deadline, cancellation and output budget injected.

The tool runs on a shared worker pool so the executor can keep its deadline even when a
tool ignores it: at the deadline the cancel signal is set, and a tool still running after
a short grace period is abandoned and reported as timed out (its effect is then unknown,
never assumed absent).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from nodes.executor.results import Invoked
from state.errors import ExecGraphError, ToolRaised
from tools.adapters.base import AdapterOutput, InvokeContext
from tools.spec import ToolSpec

__all__ = ["CANCEL_GRACE_S", "invoke"]

CANCEL_GRACE_S = 2.0


def _call(spec: ToolSpec, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
    output = spec.run(args, ctx)
    if not isinstance(output, AdapterOutput):
        return AdapterOutput(data=output, committed=spec.effect != "read")
    return output


def invoke(
    spec: ToolSpec, args: BaseModel, ctx: InvokeContext, pool: ThreadPoolExecutor
) -> Invoked:
    """Run ``spec`` and capture its output or typed error; foreign exceptions lose their text."""
    start = time.monotonic()
    future: Future[AdapterOutput] = pool.submit(_call, spec, args, ctx)
    remaining = ctx.remaining_s()
    try:
        try:
            output = future.result(timeout=remaining)
        except FutureTimeout:
            ctx.cancel.set()
            output = future.result(timeout=CANCEL_GRACE_S)
    except FutureTimeout:
        return Invoked(None, None, int((time.monotonic() - start) * 1000), timed_out=True)
    except GraphBubbleUp:
        raise
    except ExecGraphError as exc:
        return Invoked(None, exc, int((time.monotonic() - start) * 1000))
    except Exception as exc:
        return Invoked(None, ToolRaised.from_exception(exc), int((time.monotonic() - start) * 1000))
    return Invoked(output, None, int((time.monotonic() - start) * 1000))
