"""The process's thread pools, shared by every executor.

Tools run on the ``tool`` pool; whole pipeline calls under ``ainvoke`` on the ``call``
pool. Separate pools, so a call waiting for its tool can never starve that tool of a
thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache

__all__ = ["shared_pool"]

_WORKERS = {"tool": 64, "call": 128}


@cache
def shared_pool(kind: str) -> ThreadPoolExecutor:
    """The process's thread pool for ``kind`` (``"tool"`` or ``"call"``), shared by every
    executor.

    Threads start lazily and stay warm: a graph built per request, or a second graph in
    the same process, starts no threads of its own before its first batch of calls.
    """
    return ThreadPoolExecutor(max_workers=_WORKERS[kind], thread_name_prefix=kind)
