"""While a call runs: its tool's name and how long it has run, on the custom stream.

A tool that runs for a minute leaves its node silent for a minute: its result, its
ToolMessage and its logged events all come when it ends. So a call the gate cleared is
announced when it starts (``{"kind": "tool.running", "call_id", "tool", "elapsed_s": 0}``)
and again every :data:`TICK_S` seconds until it ends, through LangGraph's stream writer
(``stream_mode="custom"``), which the CLI shows as it comes. These chunks are live signals,
not log entries (no ``event_id``): the log records the call's start and end.

One daemon thread ticks every call in flight, looking at least every :data:`TICK_S`; a
call pays a registration, not a thread or a wake-up. The writer runs in a copy of the
call's context, where LangGraph's writer finds its run.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_stream_writer

from execgraph.state.contracts import ToolExecutionRequest

__all__ = ["TICK_S", "running"]

TICK_S = 1.0
"""Seconds between two progress chunks of one running call."""


@dataclass
class _Watch:
    chunk: dict[str, Any]
    writer: Callable[[Any], None]
    context: contextvars.Context
    started: float
    period: float
    due: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    active: bool = True

    def send(self, now: float) -> None:
        with self.lock:  # one context is entered by one thread at a time
            if not self.active:
                return
            chunk = {**self.chunk, "elapsed_s": round(now - self.started, 1)}
            with suppress(Exception):  # live progress is best effort; it never fails the call
                self.context.run(self.writer, chunk)


class _Ticker:
    """Sends each registered call's progress when it is due, from one thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watches: dict[int, _Watch] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, watch: _Watch) -> int:
        # No wake-up: the ticker looks again within TICK_S, before this call is due, so a
        # short call costs no thread switch.
        with self._cond:
            key = next(self._ids)
            self._watches[key] = watch
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="execgraph-progress", daemon=True
                )
                self._thread.start()
        return key

    def remove(self, key: int) -> None:
        with self._cond:
            watch = self._watches.pop(key, None)
        if watch is not None:
            with watch.lock:
                watch.active = False

    def _loop(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [w for w in self._watches.values() if w.due <= now]
                for watch in due:
                    while watch.due <= now:
                        watch.due += watch.period
                wake = min((w.due for w in self._watches.values()), default=now + TICK_S)
            for watch in due:
                watch.send(now)
            with self._cond:
                self._cond.wait(timeout=max(min(wake - now, TICK_S), 0.005))


_TICKER = _Ticker()


def _writer() -> Callable[[Any], None] | None:
    try:
        return get_stream_writer()
    except Exception:  # not inside a graph run: nobody streams
        return None


@contextmanager
def running(request: ToolExecutionRequest) -> Iterator[None]:
    """Announce ``request``'s call as running now and every :data:`TICK_S` until the
    block ends (nothing outside a graph run)."""
    writer = _writer()
    if writer is None:
        yield
        return
    started = time.monotonic()
    chunk = {
        "kind": "tool.running",
        "call_id": request.call_id,
        "tool": request.tool.name,
        "run_id": request.run_id,
        "turn_id": request.turn_id,
    }
    watch = _Watch(chunk, writer, contextvars.copy_context(), started, TICK_S, started + TICK_S)
    watch.send(started)
    key = _TICKER.add(watch)
    try:
        yield
    finally:
        _TICKER.remove(key)
