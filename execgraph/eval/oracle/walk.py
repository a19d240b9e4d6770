"""Where a run stands in its task's reference script: done, dead, ready, left.

Kept apart from the decisions so every architecture judges progress the same way. A
failed step is retried (at most :data:`MAX_ATTEMPTS` attempts) unless the failure is
final — denied, not found, refused, or a write whose outcome is unknown (retrying a
write blindly could do it twice); a step that can then never finish is dead, and so is
every step that needs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from execgraph.eval.tasks.common import Script, Seen, Step

__all__ = ["FINAL", "MAX_ATTEMPTS", "Walk", "arguments_or_none"]

MAX_ATTEMPTS = 3
FINAL = frozenset({"DENIED", "UNKNOWN", "CANCELLED"})
"""Observation statuses a retry cannot fix (or must not try to: an unknown write)."""


def arguments_or_none(step: Step, seen: Seen) -> dict[str, Any] | None:
    """The step's arguments from what was observed, or None if they cannot be made."""
    try:
        return step.arguments(seen)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, StopIteration):
        return None


@dataclass(frozen=True)
class Walk:
    """One script and how many times each of its steps was issued so far (live)."""

    script: Script
    issued: Mapping[str, int]

    def done(self, step: Step, seen: Seen) -> bool:
        """The step's latest observation succeeded."""
        return seen.status.get(step.id) == "OK"

    def dead(self, step: Step, seen: Seen) -> bool:
        """The step failed for good, a step it needs did, or what those steps observed
        cannot make its arguments (a wrong fact believed earlier)."""
        status = seen.status.get(step.id)
        needs_met = all(self.done(d, seen) for d in self.needs(step))
        if status is None and needs_met and arguments_or_none(step, seen) is None:
            return True
        if status in FINAL or (
            status not in (None, "OK") and self.issued.get(step.id, 0) >= MAX_ATTEMPTS
        ):
            return True
        return any(self.dead(d, seen) for d in self.needs(step))

    def needs(self, step: Step) -> list[Step]:
        """The steps ``step`` runs after."""
        return [s for s in (self.script.step(d) for d in step.after) if s is not None]

    def ready(self, seen: Seen, tools: Sequence[str]) -> list[Step]:
        """Steps not done, not dead, whose needs are done and whose tool is offered."""
        return [
            s
            for s in self.script.steps
            if s.tool in tools
            and not self.done(s, seen)
            and not self.dead(s, seen)
            and all(self.done(d, seen) for d in self.needs(s))
        ]

    def left(self, seen: Seen) -> list[Step]:
        """Steps still to do that can still be done."""
        return [s for s in self.script.steps if not self.done(s, seen) and not self.dead(s, seen)]

    def blocked(self, seen: Seen) -> bool:
        """Some step is dead."""
        return any(self.dead(s, seen) for s in self.script.steps)

    def why_blocked(self, seen: Seen) -> str:
        """The reason an ``abort`` gives: the steps that failed for good."""
        dead = [s for s in self.script.steps if self.dead(s, seen) and s.id in seen.status]
        named = ", ".join(f"{s.tool} ({seen.status[s.id]})" for s in dead) or "a step"
        return f"the task cannot be completed: {named} failed and may not be retried"
