"""Stage 7 — invoke: run the adapter with deadline, cancellation and output budget injected.

The tool runs on a shared worker pool so the executor can keep its deadline even when a
tool ignores it: at the deadline, or when someone asks the run to stop, the cancel signal
is set, and a tool still running after a short grace period is *abandoned*: reported as
timed out or cancelled — whichever the executor did — with its effect unknown, never
assumed absent, and its future handed back so its locks are held until it really ends.

"The tool raised ``TimeoutError``" and "the wait for the tool ran out" are different
facts, and on Python 3.11 ``concurrent.futures.TimeoutError`` *is* the builtin
``TimeoutError`` (so is ``asyncio.TimeoutError``; ``socket.timeout`` subclasses it). So
the wait is told apart by the future's state (its done callback), never by an
exception's type: a tool that raises ``TimeoutError`` has ended, and its timeout is a lost
response (a write's effect is unknown; a read may be tried again).

The tool runs in a copy of the calling node's ``contextvars`` context, so on its worker
thread it is still inside the graph's runnable context: ``get_config()``,
``get_stream_writer()`` and ``interrupt()`` work there as in the node, and the run's
callbacks hear the call as a tool run (``on_tool_start``, then ``on_tool_end`` or
``on_tool_error``), a child of the node's run, as under LangGraph's ``ToolNode``. A
LangChain tool reports itself (it is a Runnable); any other tool is reported here, and
only when some callback listens. An ``interrupt()`` inside the tool propagates (see
:mod:`execgraph.nodes.executor.recovery.paused`).

Each call first takes one of its run's tool-pool slots
(:mod:`execgraph.nodes.executor.threads.pools`) and gives it back only when the tool has
really ended, so an abandoned call keeps its slot while its thread runs on: a run whose
tools hang can hold no more than its share of the pool. A call that finds no slot free
before its deadline is refused without starting.

The tool's context (:func:`tool_context`) carries its deadline, its cancel signal (the
call's: a lost record lease sets it too), where its artifacts go, and its live output:
what a tool emits becomes a ``tool.output`` event of the call (kept with its commit) and,
inside a LangGraph node, a custom stream chunk the caller sees at once.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future
from contextvars import copy_context
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import (
    get_callback_manager_for_config,
    patch_config,
    set_config_context,
    var_child_runnable_config,
)
from langchain_core.tools import ToolException
from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.nodes.executor.call import Call
from execgraph.nodes.executor.threads.pools import (
    abandon_slot,
    pool_usage,
    release_slot,
    take_slot,
)
from execgraph.nodes.executor.threads.tool_pool import ToolPool
from execgraph.state.diagnostics import logger
from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    ModelRetry,
    ResponseLostError,
    ToolCancelled,
    ToolRaised,
    TransientError,
    UsageError,
)
from execgraph.state.errors.tool_bugs import remember
from execgraph.state.events import EventType
from execgraph.state.store.worker import worker_id
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.langchain import LangChainRunner
from execgraph.tools.spec import ToolSpec

__all__ = ["CANCEL_GRACE_S", "POLL_S", "Invoked", "Stop", "invoke", "run_tool", "tool_context"]

CANCEL_GRACE_S = 2.0
POLL_S = 0.25  # how often a running call looks for a cancel request

Stop = Literal["deadline", "cancel"]
"""Why the executor signalled a running tool to stop."""

_log = logger("executor")


@dataclass(frozen=True)
class Invoked:
    """What the adapter did: an output or a typed error, and how long it ran.

    ``stop`` says why the executor signalled the tool (``"deadline"`` or ``"cancel"``);
    ``running`` is the future of a tool that ignored the signal and still runs (its locks
    must be held until it ends); ``raised`` the foreign exception behind a ``ToolRaised``
    or a raised timeout, for the developer only.
    """

    output: AdapterOutput | None
    error: Exception | None
    running_ms: int
    timed_out: bool = False
    stop: str | None = None
    running: Future[Any] | None = None
    raised: BaseException | None = None


@lru_cache(maxsize=256)
def _root(root: str) -> Path:
    """A workspace root as a path (built once: a ``Path`` costs more than the lookup)."""
    return Path(root)


def tool_context(call: Call) -> InvokeContext:
    """The context the call's tool runs with, under its attempt id and record key.

    Its deadline is the request's, cut to the tool's timeout (or the executor's default);
    its cancel signal is the call's; what the tool emits is recorded as ``tool.output``
    events and streamed live.
    """
    request, deps = call.request, call.deps
    limit = time.time() + (call.spec.timeout_s or deps.default_timeout_s)
    deadline = limit if request.deadline is None else min(request.deadline, limit)
    try:
        writer = get_stream_writer()
    except RuntimeError:
        writer = None
    # Tools emit from their own threads; LangGraph's writer needs the node's context, and
    # one context cannot be entered by two threads at once (stdout and stderr readers).
    node_context, entering = contextvars.copy_context(), threading.Lock()
    counter = iter(range(1_000_000_000))

    def emit(kind: str, payload: dict[str, Any]) -> None:
        call.attempt_event(
            EventType.TOOL_OUTPUT, seq=next(counter), payload={"kind": kind, **payload}
        )
        if writer is not None:
            try:
                with entering:
                    node_context.run(writer, {"call_id": request.call_id, "kind": kind, **payload})
            except Exception:  # live progress is best effort; it never fails the tool
                pass

    def put_artifact(data: bytes, kind: str) -> str:
        return deps.store.put_artifact(data, kind=kind, run_id=request.run_id)

    def holds_fence() -> bool:  # read now: a woken worker's renewal may not have run yet
        if call.fence is None:
            return True
        if call.lease is not None and call.lease.lost:
            return False
        return deps.store.holds_fence(call.key, worker_id(), call.fence)

    return InvokeContext(
        run_id=request.run_id,
        call_id=request.call_id,
        attempt_id=call.attempt_id,
        workspace_root=_root(request.workspace.root),
        idempotency_key=call.key,
        deadline=deadline,
        cancel=call.cancel,
        output_budget=deps.output_budget,
        data_scope=tuple(request.data_scope),
        trace={"run_id": request.run_id, "turn_id": request.turn_id, "call_id": request.call_id},
        emit=emit,
        put_artifact=put_artifact,
        tool_call_id=request.tool_call_id,
        fence=call.fence,
        holds_fence=holds_fence,
    )


def _call(spec: ToolSpec, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
    output = spec.run(args, ctx)
    if not isinstance(output, AdapterOutput):
        return AdapterOutput(data=output, committed=spec.effect != "read")
    return output


def _listening(config: Mapping[str, Any]) -> bool:
    """Whether any callback handler would hear a tool run (cheap: no manager is built)."""
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        return bool(callbacks.handlers)
    return bool(callbacks)


def _reported(spec: ToolSpec, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
    """Run the tool as a tool run of the node's run (in the node's context, on a worker)."""
    config: RunnableConfig | None = var_child_runnable_config.get()
    if config is None or isinstance(spec.run, LangChainRunner) or not _listening(config):
        return _call(spec, args, ctx)
    inputs = args.model_dump(mode="json")
    run = get_callback_manager_for_config(config).on_tool_start(
        {"name": spec.name, "description": spec.description},
        str(inputs),
        inputs=inputs,
        tool_call_id=ctx.tool_call_id or ctx.call_id,
    )
    try:
        # What the tool runs in turn (a model, a chain) is a child of its run.
        with set_config_context(patch_config(config, callbacks=run.get_child())) as context:
            output = context.run(_call, spec, args, ctx)
    except BaseException as exc:
        run.on_tool_error(exc, tool_call_id=ctx.tool_call_id or ctx.call_id)
        raise
    run.on_tool_end(output.data, name=spec.name, tool_call_id=ctx.tool_call_id or ctx.call_id)
    return output


def _wait(
    ended: threading.Event,
    ctx: InvokeContext,
    cancelled: Callable[[], bool] | None,
    on_stop: Callable[[Stop], None] | None = None,
) -> Stop | None:
    """Wait until the tool ends (``ended``, set by its future's done callback); at the
    deadline or on a cancel request, signal it and grant a grace period. Returns why it
    was signalled (None: it ended on its own)."""
    while True:
        remaining = ctx.remaining_s()
        step = remaining if cancelled is None else min(remaining or POLL_S, POLL_S)
        if ended.wait(step):
            return None
        if remaining is not None and (ctx.remaining_s() or 0) <= 0:
            stop: Stop = "deadline"
        elif cancelled is not None and cancelled():
            stop = "cancel"
        else:
            continue
        ctx.cancel.set()
        if on_stop is not None:
            on_stop(stop)
        ended.wait(CANCEL_GRACE_S)
        return stop


def _raised_timeout(spec: ToolSpec, exc: TimeoutError) -> ExecGraphError:
    """A tool that raised ``TimeoutError`` lost its response: the effect of a write is
    unknown (reconciled, never blindly retried); a read may simply be tried again."""
    name = type(exc).__name__
    if spec.effect == "read":
        return TransientError(f"the tool timed out ({name}); it may be tried again")
    return ResponseLostError(
        f"the tool timed out ({name}) after it may have acted; its effect is unknown"
    )


def _no_slot(ctx: InvokeContext) -> DeadlineExceeded:
    """The refusal of a call whose run holds every slot it may (its tools hang)."""
    usage = pool_usage(ctx.run_id)
    if usage.abandoned_running >= usage.abandoned_limit:
        return DeadlineExceeded(
            f"the tool never started: this process has {usage.abandoned_running} abandoned "
            "tool calls still running (tools that ignored their deadline and cancel), its "
            f"limit; restart the process, or isolate such tools in a child process "
            '(tool_spec(isolation="process"))'
        )
    return DeadlineExceeded(
        f"the tool never started: this run already holds all {usage.slots} of its tool-pool "
        f"slots ({usage.abandoned} abandoned calls still running), and none came free "
        "before the call's deadline or a cancel request"
    )


def _abandoned(
    spec: ToolSpec, ctx: InvokeContext, pool: Executor, future: Future[Any], stop: Stop | None
) -> None:
    """Count the abandoned call until its tool ends, and say so (log and event)."""
    ended = abandon_slot(ctx.run_id)
    if isinstance(pool, ToolPool):
        pool.hold(future)
    future.add_done_callback(lambda _: ended())
    usage = pool_usage(ctx.run_id)
    report = {
        "reason": stop,
        "run_abandoned": usage.abandoned,
        "run_busy": usage.busy,
        "run_slots": usage.slots,
        "process_abandoned": usage.abandoned_running,
    }
    ctx.emit("tool.pool", report)
    _log.warning(
        "run %s: call %s of %s abandoned (%s) while its tool still runs; the run has %d "
        "abandoned call(s) running and holds %d of its %d tool-pool slots",
        ctx.run_id,
        ctx.call_id,
        spec.key,
        stop,
        usage.abandoned,
        usage.busy,
        usage.slots,
    )


def invoke(call: Call, ctx: InvokeContext) -> Invoked:
    """Run the call's tool (:func:`run_tool`) on the executor's tool pool; a stop signal
    is logged at once as ``tool.cancelling`` (the call is cancelling from then on)."""

    def stopping(why: Stop) -> None:
        event = call.attempt_event(EventType.TOOL_CANCELLING, payload={"reason": why})
        call.deps.store.append_events([event])

    assert call.authorized is not None
    args = call.authorized.validated.args
    return run_tool(call.spec, args, ctx, call.deps.pool, call.cancelled, on_stop=stopping)


def run_tool(
    spec: ToolSpec,
    args: BaseModel,
    ctx: InvokeContext,
    pool: Executor,
    cancelled: Callable[[], bool] | None = None,
    on_stop: Callable[[Stop], None] | None = None,
) -> Invoked:
    """Run ``spec`` and capture its output or typed error; foreign exceptions lose their text
    (kept as ``Invoked.raised`` for the developer), except a ``ToolException``: its message
    was meant for the model, and becomes a :class:`ModelRetry`.

    ``cancelled`` is polled while the tool runs (a cancel request from another process);
    ``on_stop`` hears at once when the tool is signalled (the call is then *cancelling*).
    """
    start = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - start) * 1000)

    if not take_slot(ctx.run_id, ctx.remaining_s, cancelled, POLL_S):
        return Invoked(None, _no_slot(ctx), elapsed())
    try:
        future: Future[AdapterOutput] = pool.submit(copy_context().run, _reported, spec, args, ctx)
    except BaseException:
        release_slot(ctx.run_id)
        raise
    ended = threading.Event()

    def done(_: Future[AdapterOutput]) -> None:
        release_slot(ctx.run_id)  # the tool has really ended: its slot is free
        ended.set()

    future.add_done_callback(done)
    stop = _wait(ended, ctx, cancelled, on_stop)
    if not future.done():  # it ignored the signal: abandoned, still running
        _abandoned(spec, ctx, pool, future, stop)
        return Invoked(
            None, None, elapsed(), timed_out=stop == "deadline", stop=stop, running=future
        )
    exc = future.exception()
    if exc is None:
        return Invoked(future.result(), None, elapsed(), stop=stop)
    if isinstance(exc, GraphBubbleUp):
        raise exc
    if isinstance(exc, ToolCancelled):
        # A tool that stops itself at its deadline has timed out; only a cancel request
        # from outside makes it a cancellation.
        by_deadline = stop == "deadline" or (
            stop is None and ctx.remaining_s() == 0 and not (cancelled is not None and cancelled())
        )
        if by_deadline:
            return Invoked(None, None, elapsed(), timed_out=True, stop="deadline")
        return Invoked(None, exc, elapsed(), stop=stop or "cancel")
    if isinstance(exc, ModelRetry):  # the tool's message for the model; a record for us
        return Invoked(None, exc, elapsed(), stop=stop, raised=exc)
    if isinstance(exc, ExecGraphError) and not isinstance(exc, UsageError):
        return Invoked(None, exc, elapsed(), stop=stop)
    if isinstance(exc, ToolException):  # LangChain's ModelRetry
        return Invoked(None, ModelRetry.from_tool_exception(exc), elapsed(), stop=stop, raised=exc)
    if isinstance(exc, TimeoutError):
        return Invoked(None, _raised_timeout(spec, exc), elapsed(), stop=stop, raised=exc)
    # A bug, kept for the developer (state.errors.tool_bugs): an exception nobody declared,
    # or a UsageError (a tool declared wrongly: a Command updating state, a store the graph
    # lacks), which is the developer's to fix, not the model's.
    if isinstance(exc, Exception):
        remember(ctx.run_id, ctx.call_id, exc)
        return Invoked(None, ToolRaised.from_exception(exc), elapsed(), stop=stop, raised=exc)
    raise exc  # KeyboardInterrupt, SystemExit: not the tool's outcome to report
