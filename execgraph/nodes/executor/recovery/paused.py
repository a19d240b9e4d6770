"""A tool that pauses the run (``interrupt()`` inside it) and what that means for its record.

The executor records a call before its tool runs, and LangGraph re-runs a paused node
from its start when the run resumes. A tool's ``interrupt()`` is taken as LangGraph's
``ToolNode`` takes it: the call did not finish, so its record is not committed, and on
resume the call runs again from its start, where ``interrupt()`` now returns the
answer instead of pausing.

So that the resumed call is not taken for one a crash cut short (a write without a
reconcile probe would then be settled ``unknown`` and never run again), the paused
attempt is marked on its record (attempt id ``paused:<id>``) and its locks are released:
a paused call holds nothing while it waits. On resume a marked record starts a fresh
attempt; a crash during that attempt leaves no mark and is reconciled as any other.

A tool should ask before it acts. What a write did before it called ``interrupt()`` is
the tool's responsibility: it runs again from its start on resume, so that part must be
safe to repeat (or come after the question).
"""

from __future__ import annotations

from execgraph.nodes.executor.stages.lock import Locked
from execgraph.state.errors import ExecGraphError
from execgraph.state.store.base import ExecutionRecord, ExecutionStore

__all__ = ["PAUSED", "mark_paused", "resumes_pause"]

PAUSED = "paused:"
"""The prefix of a paused attempt's id on its execution record."""


def mark_paused(store: ExecutionStore, key: str, attempt_id: str, locked: Locked) -> None:
    """Mark the call's record paused and free its locks, before the interrupt propagates.

    Best effort: if the store cannot take the mark, the record stays as a crash leaves it
    and is reconciled on resume (the safe side), and the interrupt still pauses the run.
    """
    try:
        store.restart(key, PAUSED + attempt_id)
        store.release_locks(locked.keys, locked.owner)
    except ExecGraphError:
        pass


def resumes_pause(record: ExecutionRecord) -> bool:
    """Whether an uncommitted record was left by a tool that paused the run (not a crash)."""
    return record.attempt_id.startswith(PAUSED)
