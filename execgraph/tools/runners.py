"""How a declared Python function runs as a tool: on a worker thread, or in a child process.

The executor runs every tool on a worker thread of its own pool. A plain function is
called there; a coroutine function's coroutine runs on that thread's own event loop and is
cancelled when the executor signals the call (a deadline, a cancel); ``isolation="process"``
runs the function in a child process that the signal kills. Each returns the tool's
:class:`~execgraph.tools.invocation.AdapterOutput`: a value that is not one is the data, and
a call of anything but a read counts as committed.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from execgraph.state.errors import ToolCancelled, ToolDeclarationError
from execgraph.tools.invocation import AdapterOutput, InvokeContext

__all__ = ["Runner", "function_runner", "isolated_runner", "resolve_awaitable"]

Runner = Callable[[BaseModel, InvokeContext], AdapterOutput]
"""``(validated arguments, the call's context) -> output``: what ``ToolSpec.run`` holds."""


class _OwnLoop:
    """A worker thread's event loop, closed when the thread ends.

    Held in the thread's locals, which are released when the thread exits: closing the
    loop then (not leaving it to the garbage collector) frees its self-pipe in order,
    without an "unclosed event loop" warning or an error from a half-collected loop.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __del__(self) -> None:
        self.loop.close()


_THREAD = threading.local()


def resolve_awaitable(value: Any, ctx: InvokeContext | None = None) -> Any:
    """Run a coroutine a tool returned to completion; any other value passes through.

    Tools run on worker threads, which have no running event loop. Each worker keeps one
    loop of its own and reuses it (a new loop per call costs ~0.3 ms), so a coroutine
    that blocks only ever blocks its own call.

    With the call's ``ctx``, the coroutine is stopped for real when the executor signals
    the call (its deadline passed, or someone cancelled it): the task is cancelled, so its
    ``finally`` blocks and context managers run (an MCP session closes and its server
    process ends), and :class:`~execgraph.state.errors.ToolCancelled` says it stopped. A
    coroutine that swallows the cancellation keeps its thread until it ends, as any tool
    that ignores its signal does.
    """
    if not inspect.isawaitable(value):
        return value
    own: _OwnLoop | None = getattr(_THREAD, "own", None)
    if own is None or own.loop.is_closed():
        own = _THREAD.own = _OwnLoop()
    if ctx is None:
        return own.loop.run_until_complete(_awaited(value))
    return own.loop.run_until_complete(_until_signalled(value, ctx.cancel))


async def _awaited(value: Any) -> Any:
    return await value


async def _until_signalled(value: Any, signal: threading.Event) -> Any:
    """``value``, or its cancellation once ``signal`` is set (looked at every 50 ms)."""
    task = asyncio.ensure_future(value)
    while not task.done():
        if signal.is_set():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                raise ToolCancelled("the tool was stopped when the executor signalled it") from None
            return task.result()
        await asyncio.wait({task}, timeout=_SIGNAL_POLL_S)
    return task.result()


_SIGNAL_POLL_S = 0.05


def function_runner(func: Callable[..., Any], effect: str, ctx_param: str | None) -> Runner:
    """Adapt a plain or ``async`` function: its return value is the data; a write counts as
    committed."""

    def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        kwargs = dict(args)
        if ctx_param:
            kwargs[ctx_param] = ctx
        value = resolve_awaitable(func(**kwargs), ctx)
        if isinstance(value, AdapterOutput):
            return value
        return AdapterOutput(data=value, committed=effect != "read")

    return run


def isolated_runner(func: Callable[..., Any], effect: str, ctx_param: str | None) -> Runner:
    """Run ``func`` in a child process that the call's cancel signal kills."""
    from execgraph.tools.isolation import register, run_isolated

    if ctx_param:
        raise ToolDeclarationError(
            f"isolation='process': {func.__qualname__} takes the call's context, which "
            "cannot cross into a child process; drop the ctx parameter"
        )
    where = register(func)

    def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        value = run_isolated(where, dict(args), ctx)
        if isinstance(value, AdapterOutput):
            return value
        return AdapterOutput(data=value, committed=effect != "read")

    return run
