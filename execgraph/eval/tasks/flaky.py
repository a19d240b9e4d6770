"""Flaky services: outages a task's HTTP service has, at a seeded rate.

A real service fails now and then without anyone injecting a named fault: it answers 503
or 429 for a while, errors out, commits a write and then drops the connection, or answers
too late. :class:`Flakiness` decides, for each request a
:class:`~execgraph.eval.tasks.server.TaskServer` receives, whether it falls into such an
outage. The decision is a pure function of the cell's seed and of the request itself
(method, path, body and how many identical requests came before it), never of arrival
order, so a parallel batch gets the same outages whatever order its requests arrive in
and the same seed reproduces the run.

An outage that starts at a request lasts for 1 to :data:`MAX_BURST` identical requests,
so an adapter's own retries can outlast a short one (the call succeeds after a retry) and
not a long one (the call fails and the policy must try again): tool success drops below
1 and recovery has something to measure.

:func:`flaky_services` makes every ``TaskServer`` built inside it flaky: worlds are built
by each task's own builder, and this keeps flakiness a property of the cell, not of each
task's code.
"""

from __future__ import annotations

import contextlib
import contextvars
import random
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "MAX_BURST", "Flakiness", "current", "flaky_services"]

KINDS: tuple[tuple[str, float], ...] = (
    ("unavailable", 0.35),  # 503 with a short Retry-After
    ("rate_limited", 0.25),  # 429 with a short Retry-After
    ("server_error", 0.2),  # 500: a read is retried; a write's outcome is reconciled
    ("partial_write", 0.15),  # a write committed, the connection dropped unanswered
    ("timeout", 0.05),  # a read answered only after the client's time limit
)
"""Outage kinds and their weights."""
MAX_BURST = 4
"""The longest outage, in identical requests."""
RETRY_AFTER_S = "0.05"
"""The ``Retry-After`` a 503 or 429 sends: short, so a flaky run costs little real time."""


@dataclass(frozen=True)
class Flakiness:
    """Outages at ``rate`` per request, drawn from ``seed`` (the cell's seed and task)."""

    rate: float
    seed: str

    def _draw(self, request: str, n: int) -> tuple[str, int] | None:
        rng = random.Random(f"{self.seed}|{request}|{n}")
        if rng.random() >= self.rate:
            return None
        kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        return kind, rng.randint(1, MAX_BURST)

    def outage(self, request: str, n: int, *, write: bool) -> str | None:
        """The outage the ``n``-th (from 0) request identical to ``request`` falls into."""
        if self.rate <= 0:
            return None
        for start in range(max(0, n - MAX_BURST + 1), n + 1):
            drawn = self._draw(request, start)
            if drawn is not None and n < start + drawn[1]:
                kind = drawn[0]
                if write and kind == "timeout":
                    return "partial_write"
                if not write and kind == "partial_write":
                    return "server_error"
                return kind
        return None


_CURRENT: contextvars.ContextVar[Flakiness | None] = contextvars.ContextVar(
    "execgraph_eval_flakiness", default=None
)


def current() -> Flakiness | None:
    """The flakiness of the services being built now (None: reliable)."""
    return _CURRENT.get()


@contextlib.contextmanager
def flaky_services(flakiness: Flakiness | None) -> Iterator[None]:
    """Every ``TaskServer`` made inside this block has ``flakiness``."""
    token = _CURRENT.set(flakiness)
    try:
        yield
    finally:
        _CURRENT.reset(token)
