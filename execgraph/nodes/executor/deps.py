"""ExecutorDeps: what the executor pipeline works with, bound into its nodes at build time."""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from execgraph.nodes.executor.threads.pools import shared_pool
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.invocation import DEFAULT_OUTPUT_BUDGET
from execgraph.tools.policy import PolicyEngine
from execgraph.tools.registry import ToolRegistry

__all__ = ["ExecutorDeps"]


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
    observation_chars: int = 2000
    """Bound on one observation's text, as the model sees it and its ToolMessage holds
    (the run's ``RunDeps.observation_chars``, which sets it)."""
    decision_schema: Any = None
    """What a person's answer to an approval must look like (``interrupt``'s
    ``response_schema``: an answer that does not fit is refused and the run stays paused);
    None: any answer, a malformed one read as a rejection (:func:`parse_decision`)."""
    pool: Executor = field(default_factory=lambda: shared_pool("tool"))
    calls: Executor = field(default_factory=lambda: shared_pool("call"))
    """Runs whole pipeline calls under ``ainvoke`` (tools run on ``pool``: separate pools, so
    a call waiting for its tool can never starve that tool of a thread)."""
