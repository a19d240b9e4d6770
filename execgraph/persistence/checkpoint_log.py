"""A committed checkpoint is logged: ``state.checkpointed`` in the run's event log.

The event log says what the run did; the checkpointer holds where the graph stands. The
``state.checkpointed`` event ties the two: once a checkpoint of a run is written, the log
records its id, namespace (a subgraph's, or ``""``), step and source, so a reader of the
log (``execgraph trace``, a replay, a person deciding where to rewind) can name the
checkpoint that followed an event without opening the checkpointer. Its id is derived
from the checkpoint's, so writing it twice logs it once.

Logging is best effort: the checkpoint is already committed when it is logged, and a
store that cannot take the event does not undo it (the failure goes to the
``execgraph`` logger).
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.state.errors import ExecGraphError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store.base import ExecutionStore

__all__ = ["checkpoint_event", "log_checkpoint"]

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


def log_checkpoint(store: ExecutionStore, saved: RunnableConfig, metadata: Any) -> None:
    """Append the ``state.checkpointed`` event of a committed checkpoint (best effort)."""
    event = checkpoint_event(saved, metadata)
    if event is None:
        return
    try:
        store.append_events([event], durable=False)  # the checkpoint is durable already
    except ExecGraphError as exc:
        _log.warning("could not log checkpoint %s: %s", event.payload["checkpoint_id"], exc)
