"""Store layout upgrades: each backend's numbered schema steps, run in order in place."""

from __future__ import annotations

from collections.abc import Sequence

from execgraph.state.store.dialect import Cursor

__all__ = ["upgrade_layout"]


def upgrade_layout(cur: Cursor, current: int, steps: Sequence[str]) -> None:
    """Run the layout steps after version ``current`` (step ``i`` makes version ``i + 1``).

    A step is one or more statements separated by semicolons (so none in its comments).
    """
    for version, step in enumerate(steps, start=1):
        if current < version:
            for statement in step.split(";"):
                if statement.strip():
                    cur.execute(statement)
