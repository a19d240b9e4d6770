"""A slow person, on simulated time: approvals answered late, and some too late.

A person asked to approve a call answers after a while — minutes, sometimes hours — and
sometimes not before the request expires. The evaluation cannot wait for real, so each
cell's store runs on a clock that the person moves forward (:class:`SimulatedClockStore`):
the store's :meth:`~SimulatedClockStore.clock` (what an approval's expiry is stamped and
judged by) and the time every event is logged at both read ``real time + offset``, and
the person adds their delay to the offset before they answer. No one sleeps; the log
shows the wait, latency includes it, and an approval answered after its ``expires_at``
is refused as stale by the runtime, exactly as a late click would be.

:class:`SlowPerson` draws each delay from the cell's seed: log-normal around
:data:`MEDIAN_S`, and with probability :data:`NEVER_RATE` only after the request expired
(as good as never). The draw depends on the seed, the task and the approval's number in
the run, so the ablations of one seed see the same person.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from execgraph.state.events import Event
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = ["MEDIAN_S", "NEVER_RATE", "SimulatedClockStore", "SlowPerson"]

MEDIAN_S = 600.0
"""The median time a person takes to answer an approval: ten minutes."""
SPREAD = 1.0
"""The log-normal's sigma: a quarter of the answers take over 30 minutes."""
NEVER_RATE = 0.1
"""The share of approvals answered only after they expired."""


class SimulatedClockStore(SqliteExecutionStore):
    """A SQLite execution store whose clock runs ``offset_s`` ahead of real time.

    Its :meth:`clock` and the ``ts`` of every event it logs are ``real + offset_s``; leases
    and locks keep real time (they time the worker, not the person).
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.offset_s = 0.0

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (a person took that long)."""
        self.offset_s += max(0.0, float(seconds))

    def clock(self) -> float:
        """Real time plus the offset."""
        return time.time() + self.offset_s

    def _row(self, cur: Any, event: Event) -> tuple[Any, ...]:
        stamped = event.model_copy(update={"ts": event.ts + self.offset_s})
        return super()._row(cur, stamped)


@dataclass
class SlowPerson:
    """The scripted person's timing: how long each approval waits for its answer."""

    seed: str
    median_s: float = MEDIAN_S
    never_rate: float = NEVER_RATE
    asked: int = 0
    expired: int = 0

    def delay(self, request: Mapping[str, Any], now: float) -> float:
        """Seconds until the answer to the approval ``request`` (asked at ``now``)."""
        rng = random.Random(f"{self.seed}|approval|{self.asked}")
        self.asked += 1
        expires = request.get("expires_at")
        if rng.random() < self.never_rate and isinstance(expires, int | float):
            self.expired += 1
            return max(0.0, float(expires) - now) + rng.uniform(60.0, 3600.0)
        return rng.lognormvariate(math.log(self.median_s), SPREAD)

    def answer_late(self, store: SimulatedClockStore, value: Any) -> None:
        """Before answering ``value`` (an interrupt's payload): wait, on the store's clock,
        if it asks for an approval; a question (``ask_user``) is answered at once."""
        if isinstance(value, Mapping) and value.get("kind") == "approval":
            store.advance(self.delay(value, store.clock()))
