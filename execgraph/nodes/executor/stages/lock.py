"""Stage 6 — lock: the resource locks a tool declares, taken all at once with a lease.

Locks protect deterministic resource conflicts (one file, one browser session, one
database lane); they do not replace business transactions. A key names the resource
where it is: the workspace's root directory (resolved) and the formatted template, so two
runs sharing a workspace — threads of one process, or processes on one store — exclude
each other on one file, while runs in different workspaces never contend. Keys are
sorted, and the store grants all or none, so two calls cannot deadlock.
A call's locks are held under its worker and its record (:func:`lock_owner`), so a
worker taking a crashed call over can name the locks the crashed attempt left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from execgraph.nodes.executor.call import Call
from execgraph.state.contracts import Workspace
from execgraph.state.errors import DomainViolation
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.worker import worker_id
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["Locked", "acquire", "lock", "lock_keys", "lock_owner"]


@dataclass(frozen=True)
class Locked:
    """Locks held for the call and the time spent waiting for them."""

    keys: tuple[str, ...]
    owner: str
    queued_ms: int


def lock_owner(owner: str, key: str) -> str:
    """The name a call's resource locks are held under: its worker and its record."""
    return f"{owner}|{key}"


def lock_keys(spec: ToolSpec, arguments: dict[str, Any], workspace: Workspace) -> tuple[str, ...]:
    """Format the spec's lock templates with the normalized arguments, each under the
    workspace's root (not the run: runs share a workspace, and its files).

    Raises:
        DomainViolation: a template names an argument the call does not have.
    """
    keys = set()
    for template in spec.locks:
        try:
            keys.add(f"{workspace.root}/{template.format(**arguments)}")
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


def lock(call: Call, ctx: InvokeContext) -> Locked:
    """Take the call's locks for as long as it may run (its deadline, plus a margin).

    Raises:
        DomainViolation: a lock template cannot be formed from the arguments.
        LockTimeout: another call held a lock until the wait ran out.
    """
    assert call.authorized is not None
    arguments = call.authorized.validated.normalized.arguments
    keys = lock_keys(call.spec, arguments, call.request.workspace)
    remaining = ctx.remaining_s() or call.deps.lock_timeout_s
    return acquire(
        call.deps.store,
        keys,
        lock_owner(worker_id(), call.key),
        lease_s=remaining + 30.0,
        timeout_s=min(call.deps.lock_timeout_s, remaining),
    )
