"""What a run paused for a person reads as, and what may not be done to it meanwhile.

A pause inside a node (a tool's own ``interrupt()``, an approval) discards that node's
update, so the checkpoint may still say ``RUNNING`` while the run waits: what a caller
reads says ``WAITING``. An edit of the state of a checkpoint with a pending question would
drop the question (see :mod:`execgraph.persistence.thread_bound`), so it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.types import StateSnapshot

from execgraph.state.errors import UsageError

__all__ = ["no_edit_while_waiting", "waiting_output", "waiting_snapshot"]

_RUNNING = "RUNNING"


def no_edit_while_waiting(thread: str, interrupts: Sequence[Any]) -> None:
    """Refuse a state update of a checkpoint with a pending question (see the module)."""
    if not interrupts:
        return
    values = [i.value if isinstance(i.value, dict) else {} for i in interrupts]
    asked = ", ".join(
        f"approval of {v['tool']}"
        if v.get("kind") == "approval" and v.get("tool")
        else "a question"
        for v in values
    )
    raise UsageError(
        f"run {thread} waits for a person's answer ({asked}); an edit of its state now would "
        "drop that question. Answer it first (Command(resume=...); in Studio, Resume), "
        "or fork from an earlier checkpoint"
    )


def waiting_output(out: Any) -> Any:
    """An ``invoke`` result paused on an interrupt, with the status ``WAITING``.

    A tool's own ``interrupt()`` (or any pause inside a node) discards the update of the
    node it pauses, so the checkpoint still says ``RUNNING`` while the run waits for a
    person; what the caller reads says what the run does: it waits.
    """
    # No status yet: paused at admission, asking for what the task needs (clarify.py).
    if isinstance(out, dict) and out.get("__interrupt__") and out.get("status") in (_RUNNING, None):
        return {**out, "status": "WAITING"}
    return out


def waiting_snapshot(snapshot: StateSnapshot) -> StateSnapshot:
    """:func:`waiting_output` for a state snapshot."""
    values = snapshot.values
    if (
        snapshot.interrupts
        and isinstance(values, dict)
        and values.get("status") in (_RUNNING, None)
    ):
        return snapshot._replace(values={**values, "status": "WAITING"})
    return snapshot
