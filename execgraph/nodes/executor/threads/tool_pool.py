"""ToolPool: the tool threads, replenished when hung tools hold too many of them.

A Python function on a worker thread cannot be killed, so an abandoned call (a tool that
ignored its deadline and cancel signal) keeps its thread. Per-run slots
(:mod:`execgraph.nodes.executor.threads.pools`) stop one run from holding more than its share,
but a few such runs together would still hold every thread of a fixed pool, and every
later run's tools would queue behind them forever. So the pool counts the threads its
abandoned calls hold; once they are a quarter of it, new calls go to a fresh pool of the
same size, and the old one is shut down without waiting: its idle threads exit, its hung
ones end when their tools do. Replenishing is bounded by
:data:`~execgraph.nodes.executor.threads.pools.ABANDONED_LIMIT` (hung threads of the whole
process), past which calls are refused unstarted.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["ToolPool"]

_T = TypeVar("_T")


class ToolPool(Executor):
    """A thread pool of ``workers`` threads that hung tools cannot use up.

    Attributes:
        workers: Threads per generation.
        generation: How many times the pool has been replenished.
    """

    def __init__(self, workers: int, *, thread_name_prefix: str = "tool") -> None:
        self.workers = workers
        self.generation = 0
        self._prefix = thread_name_prefix
        self._lock = threading.Lock()
        self._current = self._new()
        self._held = 0  # threads of the current generation held by abandoned calls
        self._born: weakref.WeakKeyDictionary[Future[Any], int] = weakref.WeakKeyDictionary()

    def _new(self) -> ThreadPoolExecutor:
        prefix = f"{self._prefix}-g{self.generation}" if self.generation else self._prefix
        return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=prefix)

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        with self._lock:
            future = self._current.submit(fn, *args, **kwargs)
            self._born[future] = self.generation
        return future

    def hold(self, future: Future[Any]) -> None:
        """Count ``future``'s thread as held by an abandoned call until it ends; replenish
        the pool when a quarter of its threads are held so."""
        with self._lock:
            if self._born.get(future) != self.generation or future.done():
                return
            self._held += 1
            generation = self.generation
            retired = None
            if self._held * 4 >= self.workers:
                retired, self.generation, self._held = self._current, self.generation + 1, 0
                self._current = self._new()
        future.add_done_callback(lambda _: self._freed(generation))
        if retired is not None:
            retired.shutdown(wait=False)

    def _freed(self, generation: int) -> None:
        with self._lock:
            if generation == self.generation and self._held > 0:
                self._held -= 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            current = self._current
        current.shutdown(wait=wait, cancel_futures=cancel_futures)
