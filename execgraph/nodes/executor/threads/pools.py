"""The process's thread pools, shared by every executor, and each run's share of them.

Tools run on the ``tool`` pool; whole pipeline calls under ``ainvoke`` on the ``call``
pool. Separate pools, so a call waiting for its tool can never starve that tool of a
thread.

A Python function on a worker thread cannot be killed: a tool that ignores its deadline
and cancel signal (a FIFO read, a hung socket) keeps its thread after the executor has
abandoned the call (:mod:`execgraph.nodes.executor.stages.invoke`). So one run may hold at most
:data:`RUN_SLOTS` tool-pool threads at once, its abandoned calls still running included:
a run whose tools hang again and again holds 16 threads, and the other 48 stay for every
other run. A call of a run whose slots are all held waits for one until its deadline (or a
cancel request), then is refused without having started. The counts are for the
developer to read (:func:`pool_usage`); each abandonment is also logged as a ``tool.pool``
entry of the call's ``tool.output`` events and on the ``execgraph.executor`` logger.

Slots bound one run; several runs of hung tools together are met by the tool pool itself
(:class:`~execgraph.nodes.executor.threads.tool_pool.ToolPool`), which replaces threads held by
abandoned calls, up to :data:`ABANDONED_LIMIT` hung threads in the process: past that, a
call is refused at once, unstarted, saying so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

from execgraph.nodes.executor.threads.tool_pool import ToolPool

__all__ = [
    "ABANDONED_LIMIT",
    "RUN_SLOTS",
    "PoolUsage",
    "abandon_slot",
    "pool_usage",
    "release_slot",
    "shared_pool",
    "take_slot",
]

_WORKERS = {"tool": 64, "call": 128}

RUN_SLOTS = 16
"""How many tool-pool threads one run may hold at once (a quarter of the pool). Read at
each call, so a process may set it (``pools.RUN_SLOTS = 32``) before its runs start."""

ABANDONED_LIMIT = 256
"""How many abandoned calls may still run in one process before new calls are refused
unstarted: each holds a thread that cannot be reclaimed, and replenishing the tool pool
without end would only move the exhaustion from the pool to the process."""


@cache
def shared_pool(kind: str) -> Executor:
    """The process's thread pool for ``kind`` (``"tool"``: a :class:`ToolPool`, or
    ``"call"``), shared by every executor.

    Threads start lazily and stay warm: a graph built per request, or a second graph in
    the same process, starts no threads of its own before its first batch of calls.
    """
    if kind == "tool":
        return ToolPool(_WORKERS[kind], thread_name_prefix=kind)
    return ThreadPoolExecutor(max_workers=_WORKERS[kind], thread_name_prefix=kind)


@dataclass(frozen=True)
class PoolUsage:
    """One run's share of the tool pool, and the process's abandoned calls.

    Attributes:
        run_id: The run asked about.
        busy: Tool-pool threads the run holds now (running calls, abandoned ones included).
        abandoned: The run's abandoned calls whose tool still runs.
        slots: The cap on ``busy`` (:data:`RUN_SLOTS`).
        abandoned_running: Abandoned calls of every run still running in this process.
        abandoned_total: Calls abandoned in this process since it started.
        abandoned_limit: The cap on ``abandoned_running`` (:data:`ABANDONED_LIMIT`).
    """

    run_id: str
    busy: int
    abandoned: int
    slots: int
    abandoned_running: int
    abandoned_total: int
    abandoned_limit: int


_cond = threading.Condition()
_busy: dict[str, int] = {}
_abandoned: dict[str, int] = {}
_totals = {"abandoned": 0, "running": 0}


def take_slot(
    run_id: str,
    remaining_s: Callable[[], float | None],
    cancelled: Callable[[], bool] | None,
    poll_s: float,
) -> bool:
    """Take one of ``run_id``'s tool-pool slots, waiting while all are held: until
    ``remaining_s()`` runs out or ``cancelled()`` says stop (then False, nothing taken).
    With :data:`ABANDONED_LIMIT` abandoned calls running in the process: False at once."""
    while True:
        with _cond:
            if _totals["running"] >= ABANDONED_LIMIT:
                return False
            if _busy.get(run_id, 0) < RUN_SLOTS:
                _busy[run_id] = _busy.get(run_id, 0) + 1
                return True
            left = remaining_s()
            if left is not None and left <= 0:
                return False
            _cond.wait(timeout=poll_s if left is None else min(poll_s, left))
        # The cancel check may ask the store: never under the lock.
        if cancelled is not None and _busy.get(run_id, 0) >= RUN_SLOTS and cancelled():
            return False


def release_slot(run_id: str) -> None:
    """Give back a slot taken by :func:`take_slot` (when the tool has really ended)."""
    with _cond:
        _decrement(_busy, run_id)
        _cond.notify_all()


def abandon_slot(run_id: str) -> Callable[[], None]:
    """Count one of ``run_id``'s calls as abandoned while its tool runs on; returns what
    to call when it ends (its slot is given back by :func:`release_slot`)."""
    with _cond:
        _abandoned[run_id] = _abandoned.get(run_id, 0) + 1
        _totals["abandoned"] += 1
        _totals["running"] += 1

    def ended() -> None:
        with _cond:
            _decrement(_abandoned, run_id)
            _totals["running"] -= 1

    return ended


def _decrement(counts: dict[str, int], run_id: str) -> None:
    """One less for ``run_id``; a run at zero leaves the table (it stays O(live runs))."""
    left = counts.get(run_id, 0) - 1
    if left > 0:
        counts[run_id] = left
    else:
        counts.pop(run_id, None)


def pool_usage(run_id: str) -> PoolUsage:
    """``run_id``'s share of the tool pool now, and the process's abandoned calls."""
    with _cond:
        return PoolUsage(
            run_id=run_id,
            busy=_busy.get(run_id, 0),
            abandoned=_abandoned.get(run_id, 0),
            slots=RUN_SLOTS,
            abandoned_running=_totals["running"],
            abandoned_total=_totals["abandoned"],
            abandoned_limit=ABANDONED_LIMIT,
        )
