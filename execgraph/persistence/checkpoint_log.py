"""A committed checkpoint is logged: ``state.checkpointed`` in the run's event log.

The event log says what the run did; the checkpointer holds where the graph stands. The
``state.checkpointed`` event ties the two: once a checkpoint of a run is written, the log
records its id, namespace (a subgraph's, or ``""``), step and source, so a reader of the
log (``execgraph trace``, a replay, a person deciding where to rewind) can name the
checkpoint that followed an event without opening the checkpointer. Its id is derived
from the checkpoint's, so writing it twice logs it once.

Logging is best effort and batched: the checkpoint is already committed when it is
noted, and a store that cannot take the event does not undo it (the failure goes to the
``execgraph`` logger). A run's checkpoint events are written together when its stream
ends (a pause, the end, an error) or once :data:`BATCH` of them wait, not one store
transaction per checkpoint: a step's checkpoint would otherwise cost a write of its own.
A process killed mid-run loses the notes not yet written; the checkpoints themselves are
in the checkpointer.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.state.errors import ExecGraphError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store.base import ExecutionStore

__all__ = ["BATCH", "CheckpointLog", "checkpoint_event"]

BATCH = 32
"""Checkpoint events a run keeps before it writes them without waiting for its end."""

_log = logging.getLogger("execgraph.persistence")


def checkpoint_event(saved: RunnableConfig, metadata: Any) -> Event | None:
    """The ``state.checkpointed`` event for the checkpoint ``saved`` names (the config a
    saver's ``put`` returns), or None when it names no thread or checkpoint."""
    conf = saved.get("configurable") or {}
    thread, checkpoint = conf.get("thread_id"), conf.get("checkpoint_id")
    if not thread or not checkpoint:
        return None
    ns = str(conf.get("checkpoint_ns") or "")
    meta = metadata if isinstance(metadata, dict) else {}
    payload = {
        "checkpoint_id": str(checkpoint),
        "checkpoint_ns": ns,
        "step": meta.get("step"),
        "source": meta.get("source"),
    }
    seq = f"{ns}|{checkpoint}" if ns else str(checkpoint)
    return make_event(EventType.STATE_CHECKPOINTED, str(thread), seq=seq, payload=payload)


class CheckpointLog:
    """The ``state.checkpointed`` events of one run's stream, written in batches."""

    def __init__(self, store: ExecutionStore) -> None:
        self.store = store
        self._lock = threading.Lock()  # LangGraph writes checkpoints from its own threads
        self._pending: list[Event] = []

    def note(self, saved: RunnableConfig, metadata: Any) -> bool:
        """Keep the event of a committed checkpoint; True once a batch is full and should
        be written (:meth:`flush`; off the event loop where the saver is async)."""
        event = checkpoint_event(saved, metadata)
        if event is None:
            return False
        with self._lock:
            self._pending.append(event)
            return len(self._pending) >= BATCH

    def flush(self) -> None:
        """Write the events kept so far (best effort)."""
        with self._lock:
            events, self._pending = self._pending, []
        if not events:
            return
        try:
            self.store.append_events(events, durable=False)  # the checkpoints are durable
        except ExecGraphError as exc:
            _log.warning("could not log %d checkpoint(s): %s", len(events), exc)
