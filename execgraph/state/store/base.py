"""ExecutionStore: the durable record of what the runtime did to the world.

LangGraph's checkpointer remembers where a graph is; the execution store remembers what
was done: one execution record per idempotency key (written *before* any side effect and
committed with its result in one transaction), resource locks with leases, the versioned
append-only event log, artifacts for bulky outputs, single-use approval tokens and the one
decision recorded per approval request. Every backend (SQLite embedded, PostgreSQL
scale-out) passes one conformance suite.

A record in flight is owned by a *worker* (:mod:`execgraph.state.store.worker`), with a
lease (``lease_until``, renewed while its tool runs) and a fencing token (``fence``). Only
an expired lease, or an owner provably dead, lets another worker :meth:`take_over
<ExecutionStore.take_over>` the record, which bumps the fence; a commit that names an old
fence matches nothing and raises :class:`~execgraph.state.errors.FencedOut`.

A whole run is held the same way: :meth:`lease_run <ExecutionStore.lease_run>` gives
the thread to one worker at a time, and a commit of a run's record by any worker but the
run lease's owner matches nothing (FencedOut) — the graph's entry points take it
(:mod:`execgraph.persistence.run_lease`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from execgraph.state.events import Event

__all__ = [
    "Claim",
    "ExecutionRecord",
    "ExecutionStore",
    "OutcomeCount",
    "RecordState",
    "Reservation",
    "RunLease",
]

RecordState = Literal["started", "committed"]


@dataclass(frozen=True)
class ExecutionRecord:
    """One call's durable record, keyed by its idempotency key."""

    idempotency_key: str
    run_id: str
    call_id: str
    tool: str
    version: str
    args_hash: str
    attempt_id: str
    attempts: int
    state: RecordState
    result: dict[str, Any] | None
    created_at: float
    updated_at: float
    #: The worker running it (``host/pid/start/boot``); empty once committed (a committed
    #: record is nobody's to run) and in records from before owners.
    owner: str = ""
    #: Until when the owner's lease holds (store clock); renewed while its tool runs.
    lease_until: float = 0.0
    #: The fencing token: 1 when reserved, one more at each take-over.
    fence: int = 0
    #: The hash of the arguments as the model proposed them, before normalization
    #: (``args_hash`` is the normalized one): equal to it when normalization changed
    #: nothing; empty in records from before it was kept.
    requested_hash: str = ""


@dataclass(frozen=True)
class Reservation:
    """The outcome of :meth:`ExecutionStore.reserve`.

    ``fresh`` is True when this call created the record and may start the side effect.
    Otherwise ``record`` is the existing one: committed (return its result as is) or
    started-but-uncommitted (reconcile before anything runs again).
    """

    record: ExecutionRecord
    fresh: bool


@dataclass(frozen=True)
class Claim:
    """One execution record to reserve, as :meth:`ExecutionStore.reserve` takes it."""

    key: str
    run_id: str
    call_id: str
    tool: str
    version: str
    args_hash: str
    attempt_id: str
    #: The worker that will run it, and for how long its lease holds before a renewal.
    owner: str = ""
    lease_s: float = 0.0
    #: The arguments' hash as proposed, before normalization (``args_hash``: after).
    requested_hash: str = ""


@dataclass(frozen=True)
class RunLease:
    """Who holds a run's lease (the worker running the thread), and until when (store
    clock). A released lease keeps its last owner, with ``lease_until`` 0."""

    run_id: str
    owner: str
    lease_until: float


@dataclass(frozen=True)
class OutcomeCount:
    """How many of a run's committed calls of ``tool`` ended with this outcome and status."""

    tool: str
    outcome: str
    status: str
    count: int


@runtime_checkable
class ExecutionStore(Protocol):
    """Durable execution records, locks, events, artifacts and approval tokens."""

    def reserve(
        self,
        key: str,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        version: str,
        args_hash: str,
        attempt_id: str,
        durable: bool = True,
        owner: str = "",
        lease_s: float = 0.0,
        requested_hash: str = "",
    ) -> Reservation:
        """Create a ``started`` record for ``key`` unless one exists; durable on return.

        A new record belongs to ``owner`` for ``lease_s`` seconds (fence 1). With
        ``durable=False`` the record is visible to every worker at once but does not wait
        for its own flush to disk: for calls with no side effect to guard.
        """
        ...

    def reserve_all(
        self, claims: Sequence[Claim], *, durable: bool = True, log: Sequence[Event] = ()
    ) -> list[Reservation]:
        """Reserve every claim as :meth:`reserve` would, in one transaction, in order;
        append ``log`` first, in the same transaction.

        A batch of calls starting together pays one commit instead of one each, and no
        call of it waits for the others' reservations to get through the store's lock.
        ``log`` is what led to the calls (a turn's model reply and decisions): it is in the
        store exactly when their records are, for the price of no transaction of its own.
        """
        ...

    def restart(self, key: str, attempt_id: str, *, fence: int | None = None) -> ExecutionRecord:
        """Start a new attempt on an uncommitted record (after reconcile proved no effect).

        With ``fence``, only while the record still carries it (else FencedOut).
        """
        ...

    def take_over(
        self,
        key: str,
        owner: str,
        *,
        attempt_id: str,
        lease_s: float,
        gone: str | None = None,
        fence: int | None = None,
    ) -> ExecutionRecord | None:
        """Make ``owner`` the owner of ``key``'s uncommitted record, as a new attempt, with
        the fence one higher; only if its lease expired, or it is still as the caller saw
        it (owner ``gone``, at ``fence``) and that owner is proved dead. None when the
        record is committed or its owner still holds it; of concurrent takers one wins.
        """
        ...

    def clock(self) -> float:
        """The store's time now, in seconds since the epoch: what an approval's expiry is
        stamped and judged by, so the worker that asks and the one that answers read one
        clock (PostgreSQL's server; an embedded home's own machine)."""
        ...

    def renew_leases(self, keys: Sequence[str], owner: str, *, lease_s: float) -> list[str]:
        """Extend ``owner``'s leases on the uncommitted records of ``keys``; returns the keys
        still held (a key missing was taken over or committed)."""
        ...

    def holds_fence(self, key: str, owner: str, fence: int) -> bool:
        """Whether ``owner`` still holds ``key``'s uncommitted record at ``fence`` and no
        other worker holds (or took) the run's lease: a stale owner's effect is to be
        refused (the check a tool makes right before its effect)."""
        ...

    def settle_unknown(
        self, key: str, result: dict[str, Any], *, events: Sequence[Event] = ()
    ) -> ExecutionRecord:
        """Replace a committed ``unknown`` result with a person's verdict (and log ``events``)."""
        ...

    def get(self, key: str) -> ExecutionRecord | None:
        """The record for ``key``, if any."""
        ...

    def pending(self, run_id: str | None = None) -> list[ExecutionRecord]:
        """Records started but not committed (to reconcile after a crash)."""
        ...

    def committed(
        self, run_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[ExecutionRecord]:
        """A run's committed records, oldest first (a page of them with ``offset``/``limit``).

        Every result a run's state has let go of is here; readers page through a long run.
        """
        ...

    def outcomes(self, run_id: str) -> list[OutcomeCount]:
        """A run's committed calls counted per tool, outcome and status (in the database)."""
        ...

    def evidence(self, run_id: str) -> list[dict[str, Any]]:
        """The evidence items of a run's committed results, oldest first.

        Only records that carry evidence are read, so a verdict over a long run of calls
        without evidence costs one aggregate query, not one row per call.
        """
        ...

    def commit(
        self,
        key: str,
        result: dict[str, Any],
        *,
        events: Sequence[Event] = (),
        release: Sequence[str] = (),
        owner: str = "",
        durable: bool = True,
        fence: int | None = None,
    ) -> ExecutionRecord:
        """In one transaction: store the result, mark committed, append events, release locks.

        With ``fence``, an uncommitted record with another fence (taken over) is left as it
        is and FencedOut is raised (the locks in ``release`` are still released).

        ``durable=False`` does not wait for the flush, for a call that is safe to redo (a
        read): a result lost to a power cut leaves the record started, and it is redone.

        Committing a key that is already committed changes nothing and returns the
        existing record (the first commit wins).
        """
        ...

    def acquire_locks(
        self, keys: Sequence[str], owner: str, *, lease_s: float, timeout_s: float
    ) -> None:
        """Take every lock in ``keys`` or none (LockTimeout); expired leases may be taken over.

        Re-acquiring a lock the owner already holds renews its lease.
        """
        ...

    def release_locks(self, keys: Sequence[str], owner: str) -> None:
        """Release the owner's locks (others' locks are untouched)."""
        ...

    def release_gone_locks(self, keys: Sequence[str]) -> None:
        """Release the locks on ``keys`` whose owners are provably gone."""
        ...

    def lease_run(self, run_id: str, owner: str, *, lease_s: float) -> RunLease:
        """Take or renew ``run_id``'s lease for ``owner`` for ``lease_s`` seconds: when it is
        free, expired, ``owner``'s own, or held by an owner provably gone. Returns the lease
        as it stands: ``owner`` holds it exactly when ``lease.owner == owner``.

        While another worker holds it, that worker's :meth:`commit` of the run's records is
        refused (FencedOut): a worker whose run lease was taken over cannot commit.
        """
        ...

    def renew_run(self, run_id: str, owner: str, *, lease_s: float) -> bool:
        """Extend ``owner``'s lease on ``run_id`` while no other worker took it since
        (False: taken over, even if released again; a renewal never takes it back)."""
        ...

    def lease_run_holder(self, run_id: str) -> str:
        """Who holds (or last held) ``run_id``'s lease ("" when nobody ever did)."""
        ...

    def release_run(self, run_id: str, owner: str) -> None:
        """End ``owner``'s lease on ``run_id`` (another's is untouched); the lease keeps
        naming ``owner``, so a worker it was taken from stays fenced."""
        ...

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        """Append events, ignoring ids already logged; returns the ids newly appended.

        With ``durable=False`` they are visible at once and reach the disk with the next
        durable write (logs flush in order): for facts already durable elsewhere.
        """
        ...

    def events(
        self, run_id: str, *, call_id: str | None = None, types: Collection[str] | None = None
    ) -> list[Event]:
        """A run's events in append order (optionally one call's, or only ``types``: a
        reader that needs a few kinds does not load a long run's whole log)."""
        ...

    def event(self, event_id: str) -> Event | None:
        """One event by its id, if logged (ids are deterministic per occurrence)."""
        ...

    def has_event(self, run_id: str, type: str) -> bool:
        """Whether the run logged an event of ``type`` (used for cancel requests)."""
        ...

    def put_artifact(self, data: bytes, *, kind: str, run_id: str = "") -> str:
        """Store bulky bytes; returns a content-addressed ref (``sha256:...``)."""
        ...

    def get_artifact(self, ref: str) -> bytes:
        """Bytes for a ref (KeyError when unknown)."""
        ...

    def use_approval_token(self, token_id: str) -> bool:
        """Mark a token used; True only the first time (tokens are single-use)."""
        ...

    def decide_approval(self, request_id: str, decision: dict[str, Any]) -> dict[str, Any]:
        """Record ``decision`` for an approval request unless one is recorded; return the
        one that stands (the first: later answers lose)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
