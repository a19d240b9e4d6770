"""Name lookups bounded by the call's deadline and cancel signal.

``getaddrinfo`` has no timeout argument, and a resolver that hangs would hold the tool's
pool thread past its deadline. The lookup runs on a small shared pool instead; the caller
waits only until its deadline or a cancel, then gives up with a typed error. The lookup
thread finishes on the resolver's own timeouts and is reused: a hung resolver can occupy at
most the pool's few workers, never the executor's threads.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from execgraph.state.errors import DeadlineExceeded, ToolCancelled
from execgraph.tools.adapters.netguard import Resolver

__all__ = ["bounded_resolver"]

_POLL_S = 0.05
_LOOKUPS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="execgraph-lookup")


def bounded_resolver(resolver: Resolver, deadline: float, cancel: threading.Event) -> Resolver:
    """``resolver`` that returns or raises by ``deadline`` (or on cancel), whatever it does."""

    def lookup(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        future = _LOOKUPS.submit(resolver, *args, **kwargs)
        while True:
            if cancel.is_set():
                future.cancel()
                raise ToolCancelled("cancelled during the name lookup; nothing was sent")
            left = deadline - time.time()
            if left <= 0:
                future.cancel()
                raise DeadlineExceeded(
                    "the name lookup did not finish before the deadline; nothing was sent"
                )
            try:
                return future.result(timeout=min(left, _POLL_S))
            except FutureTimeout:
                continue

    return lookup
