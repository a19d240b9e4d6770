"""Stage 7 — invoke: run the adapter with deadline, cancellation and output budget injected.

The tool runs on a shared worker pool so the executor can keep its deadline even when a
tool ignores it: at the deadline the cancel signal is set, and a tool still running after
a short grace period is abandoned and reported as timed out (its effect is then unknown,
never assumed absent).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.nodes.executor.stages import Invoked
from execgraph.state.errors import ExecGraphError, ToolCancelled, ToolRaised
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["CANCEL_GRACE_S", "POLL_S", "invoke"]

CANCEL_GRACE_S = 2.0
POLL_S = 0.25  # how often a running call looks for a cancel request


def _call(spec: ToolSpec, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
    output = spec.run(args, ctx)
    if not isinstance(output, AdapterOutput):
        return AdapterOutput(data=output, committed=spec.effect != "read")
    return output


def _wait(
    future: Future[AdapterOutput], ctx: InvokeContext, cancelled: Callable[[], bool] | None
) -> AdapterOutput:
    """Wait for the tool; at the deadline or on a cancel request, signal it and grant a grace."""
    while True:
        remaining = ctx.remaining_s()
        step = remaining if cancelled is None else min(remaining or POLL_S, POLL_S)
        try:
            return future.result(timeout=step)
        except FutureTimeout:
            out_of_time = remaining is not None and (ctx.remaining_s() or 0) <= 0
            if out_of_time or (cancelled is not None and cancelled()):
                ctx.cancel.set()
                return future.result(timeout=CANCEL_GRACE_S)


def invoke(
    spec: ToolSpec,
    args: BaseModel,
    ctx: InvokeContext,
    pool: ThreadPoolExecutor,
    cancelled: Callable[[], bool] | None = None,
) -> Invoked:
    """Run ``spec`` and capture its output or typed error; foreign exceptions lose their text.

    ``cancelled`` is polled while the tool runs (a cancel request from another process).
    """
    start = time.monotonic()
    future: Future[AdapterOutput] = pool.submit(_call, spec, args, ctx)
    try:
        output = _wait(future, ctx, cancelled)
    except FutureTimeout:
        return Invoked(None, None, int((time.monotonic() - start) * 1000), timed_out=True)
    except GraphBubbleUp:
        raise
    except ToolCancelled as exc:
        # A tool that stops itself at its deadline has timed out; only a cancel request
        # from outside makes it a cancellation.
        by_deadline = ctx.remaining_s() == 0 and not (cancelled is not None and cancelled())
        elapsed = int((time.monotonic() - start) * 1000)
        return (
            Invoked(None, None, elapsed, timed_out=True)
            if by_deadline
            else Invoked(None, exc, elapsed)
        )
    except ExecGraphError as exc:
        return Invoked(None, exc, int((time.monotonic() - start) * 1000))
    except Exception as exc:
        return Invoked(None, ToolRaised.from_exception(exc), int((time.monotonic() - start) * 1000))
    return Invoked(output, None, int((time.monotonic() - start) * 1000))
