"""Typed results passed between executor stages, and the executor's dependencies."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from execgraph.state.contracts import (
    Evidence,
    Outcome,
    PartialProgress,
    SideEffect,
    ToolError,
    ToolExecutionRequest,
)
from execgraph.state.errors import ObservationStatus
from execgraph.state.events import Event
from execgraph.state.store.base import ExecutionRecord, ExecutionStore
from execgraph.tools.adapters.base import DEFAULT_OUTPUT_BUDGET, AdapterOutput
from execgraph.tools.policy import PolicyDecision, PolicyEngine
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = [
    "Authorized",
    "ExecutorDeps",
    "Invoked",
    "Locked",
    "Normalized",
    "Reserved",
    "Settled",
    "Staged",
    "Validated",
    "shared_pool",
]


@cache
def shared_pool(kind: str) -> ThreadPoolExecutor:
    """The process's thread pool for ``kind`` (``"tool"`` or ``"call"``), shared by every
    executor.

    Threads start lazily and stay warm: a graph built per request, or a second graph in
    the same process, starts no threads of its own before its first batch of calls.
    """
    return ThreadPoolExecutor(max_workers=_WORKERS[kind], thread_name_prefix=kind)


_WORKERS = {"tool": 64, "call": 128}


@dataclass(frozen=True)
class ExecutorDeps:
    """What the executor pipeline works with; bound into its nodes when the graph is built."""

    registry: ToolRegistry
    policy: PolicyEngine
    store: ExecutionStore
    approval_secret: bytes
    approval_ttl_s: float = 24 * 3600.0
    output_budget: int = DEFAULT_OUTPUT_BUDGET
    lock_timeout_s: float = 30.0
    default_timeout_s: float = 300.0
    pool: ThreadPoolExecutor = field(default_factory=lambda: shared_pool("tool"))
    calls: ThreadPoolExecutor = field(default_factory=lambda: shared_pool("call"))
    """Runs whole pipeline calls under ``ainvoke`` (tools run on ``pool``: separate pools, so
    a call waiting for its tool can never starve that tool of a thread)."""


@dataclass(frozen=True)
class Normalized:
    """Arguments after aliases, path canonicalization and defaults; hashes before and after."""

    arguments: dict[str, Any]
    hash_before: str
    args_hash: str
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Validated:
    """Arguments that passed schema, domain, state-guard and runtime checks."""

    args: BaseModel
    normalized: Normalized


@dataclass(frozen=True)
class Authorized:
    """A validated call and the policy's verdict for it."""

    spec: ToolSpec
    validated: Validated
    decision: PolicyDecision
    token_id: str | None = None


@dataclass(frozen=True)
class Staged:
    """A gated call authorized for its execution record, with the events logged so far."""

    request: ToolExecutionRequest
    authorized: Authorized
    attempt_id: str
    events: list[Event]


@dataclass(frozen=True)
class Reserved:
    """The idempotency reservation: fresh, already committed, or in doubt (crash)."""

    key: str
    kind: str  # "fresh" | "committed" | "in_doubt"
    record: ExecutionRecord


@dataclass(frozen=True)
class Locked:
    """Locks held for the call and the time spent waiting for them."""

    keys: tuple[str, ...]
    owner: str
    queued_ms: int


@dataclass(frozen=True)
class Invoked:
    """What the adapter did: an output or a typed error, and how long it ran."""

    output: AdapterOutput | None
    error: Exception | None
    running_ms: int
    timed_out: bool = False


@dataclass(frozen=True)
class Settled:
    """The outcome of one call before evidence and commit."""

    outcome: Outcome
    status: ObservationStatus
    side_effect: SideEffect
    data: Any = None
    error: ToolError | None = None
    evidence: tuple[Evidence, ...] = ()
    truncated: bool = False
    partial: PartialProgress | None = None
    reconciled: bool = False
