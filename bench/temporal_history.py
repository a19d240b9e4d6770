"""Where a Temporal run's time went, from its workflow history: inside the advance
activity (execgraph's own work on the worker) or around it (Temporal's scheduling).

The event times are the server's, so the split needs no clock in the worker.
"""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

__all__ = ["activity_seconds"]


async def activity_seconds(client: Client, run_id: str) -> float:
    """Seconds the run's advance activities ran: each attempt's start to its end (the
    run's advances, summed; the workload has one per run)."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    started: dict[int, Any] = {}
    total = 0.0
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.event_id] = event.event_time.ToDatetime()
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            began = started.get(event.activity_task_completed_event_attributes.started_event_id)
            if began is not None:
                total += (event.event_time.ToDatetime() - began).total_seconds()
    return total
