"""How old an observation is, as the model is told it.

An observation is what a tool returned at one time, not the state of the world now: a
file read an hour ago may have changed since, a price quoted yesterday surely has. The
model is shown an observation's age once it is older than :data:`STALE_AFTER_S` (a
run's fresh observations are shown as they are, so a quick run's prompts do not change
from one second to the next). The age is measured on the store's clock
(``ExecutionStore.clock``), the one every worker of a run reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["STALE_AFTER_S", "age_text", "newest_observed_at", "stale_age"]

STALE_AFTER_S = 60.0
"""An observation older than this is shown with its age."""

_UNITS = ((86_400, "d"), (3_600, "h"), (60, "min"))


def age_text(seconds: float) -> str:
    """``seconds`` in its largest whole unit: ``"2 h"``, ``"5 min"``, ``"40 s"``."""
    for size, unit in _UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def stale_age(observed_at: Any, now: float | None) -> str | None:
    """The age to show for an observation made at ``observed_at``, or None (fresh, no
    time known, or no clock read)."""
    if now is None or not isinstance(observed_at, int | float) or observed_at <= 0:
        return None
    seconds = now - float(observed_at)
    return age_text(seconds) if seconds >= STALE_AFTER_S else None


def newest_observed_at(evidence: Iterable[Mapping[str, Any]]) -> float:
    """When the newest of a result's evidence items was observed (0.0: none says)."""
    times = [e.get("observed_at") for e in evidence if isinstance(e, Mapping)]
    return max((float(t) for t in times if isinstance(t, int | float)), default=0.0)
