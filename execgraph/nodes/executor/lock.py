"""Stage 6 — lock: the resource locks a tool declares, taken all at once with a lease.

Locks protect deterministic resource conflicts (one file, one browser session, one
database lane); they do not replace business transactions. Keys are scoped to the
workspace and sorted, and the store grants all or none, so two calls cannot deadlock.
"""

from __future__ import annotations

import time
from typing import Any

from execgraph.nodes.executor.stages import Locked
from execgraph.state.errors import DomainViolation
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.spec import ToolSpec

__all__ = ["acquire", "lock_keys"]


def lock_keys(spec: ToolSpec, arguments: dict[str, Any], workspace_id: str) -> tuple[str, ...]:
    """Format the spec's lock templates with the normalized arguments.

    Raises:
        DomainViolation: a template names an argument the call does not have.
    """
    keys = set()
    for template in spec.locks:
        try:
            keys.add(f"{workspace_id}/{template.format(**arguments)}")
        except (KeyError, IndexError, ValueError):
            raise DomainViolation(f"lock {template!r} of {spec.key} cannot be formed") from None
    return tuple(sorted(keys))


def acquire(
    store: ExecutionStore, keys: tuple[str, ...], owner: str, *, lease_s: float, timeout_s: float
) -> Locked:
    """Take every key or raise LockTimeout; reports the time spent queued."""
    start = time.monotonic()
    if keys:
        store.acquire_locks(keys, owner, lease_s=lease_s, timeout_s=timeout_s)
    return Locked(keys=keys, owner=owner, queued_ms=int((time.monotonic() - start) * 1000))
