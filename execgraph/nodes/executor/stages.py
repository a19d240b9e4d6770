"""Typed results passed from one executor stage to the next."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from execgraph.state.contracts import (
    Evidence,
    Outcome,
    PartialProgress,
    SideEffect,
    ToolError,
    ToolExecutionRequest,
    ToolResult,
)
from execgraph.state.errors import ObservationStatus
from execgraph.state.events import Event
from execgraph.state.store.base import ExecutionRecord
from execgraph.tools.invocation import AdapterOutput
from execgraph.tools.policy import PolicyDecision
from execgraph.tools.spec import ToolSpec

__all__ = [
    "Authorized",
    "Finished",
    "Invoked",
    "Locked",
    "Normalized",
    "Reserved",
    "Settled",
    "Staged",
    "Validated",
]


@dataclass(frozen=True)
class Normalized:
    """Arguments after aliases, path canonicalization and defaults; hashes before and after;
    ``size``: bytes of their canonical JSON (what the run's argument bound counts)."""

    arguments: dict[str, Any]
    hash_before: str
    args_hash: str
    paths: tuple[str, ...] = ()
    size: int = 0


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
    """What the adapter did: an output or a typed error, and how long it ran.

    ``stop`` says why the executor signalled the tool (``"deadline"`` or ``"cancel"``);
    ``running`` is the future of a tool that ignored the signal and still runs (its locks
    must be held until it ends); ``raised`` the foreign exception behind a ``ToolRaised``
    or a raised timeout, for the developer only.
    """

    output: AdapterOutput | None
    error: Exception | None
    running_ms: int
    timed_out: bool = False
    stop: str | None = None
    running: Future[Any] | None = None
    raised: BaseException | None = None


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


@dataclass(frozen=True)
class Finished:
    """One call's end: its ToolResult (run, refused, or committed earlier) and the ids of
    the events logged for it. A node turns it into its update; nothing before does."""

    result: ToolResult
    event_ids: tuple[str, ...]
