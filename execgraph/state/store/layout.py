"""Store layout upgrades: each backend's numbered schema steps, run in order in place."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from execgraph.state.store.dialect import Cursor

__all__ = ["Step", "upgrade_layout"]


Step = str | Callable[[Cursor], None]
"""Statements separated by semicolons (so none in comments), or a function that runs them
(for a step SQL alone cannot make idempotent, such as SQLite's ``ADD COLUMN``)."""


def upgrade_layout(cur: Cursor, current: int, steps: Sequence[Step]) -> None:
    """Run the layout steps after version ``current`` (step ``i`` makes version ``i + 1``)."""
    for version, step in enumerate(steps, start=1):
        if current >= version:
            continue
        if callable(step):
            step(cur)
            continue
        for statement in step.split(";"):
            if statement.strip():
                cur.execute(statement)
