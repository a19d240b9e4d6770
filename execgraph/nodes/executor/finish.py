"""How a call ends: its ``tool.completed`` event, then its commit, or only its log.

A call that reached its execution record ends in one commit transaction (result, events,
lock release); a call refused before any record was reserved has nothing to commit, so
its events are only appended. Either way the model observes the call only after this.
"""

from __future__ import annotations

from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.commit import commit
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.reserve import mark_unresolved
from execgraph.nodes.executor.stages import Authorized, Finished, Locked
from execgraph.state.contracts import ToolExecutionRequest, ToolResult
from execgraph.state.events import Event, EventType

__all__ = ["finish", "finish_unreserved"]


def finish_unreserved(
    request: ToolExecutionRequest, deps: ExecutorDeps, result: ToolResult, events: list[Event]
) -> Finished:
    """Log the events of a call refused before any record was reserved, and its end."""
    done = call_event(
        request,
        EventType.TOOL_COMPLETED,
        payload={"outcome": result.outcome, "status": result.status},
    )
    logged = [*events, done]
    deps.store.append_events(logged)
    return Finished(result, tuple(e.event_id for e in logged))


def finish(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    key: str,
    result: ToolResult,
    events: list[Event],
    locked: Locked | None,
    authorized: Authorized | None = None,
    fence: int | None = None,
) -> Finished:
    """Log the call's completion and commit ``result`` with ``events``, releasing
    ``locked``; an ``unknown`` outcome of an authorized call is remembered as unresolved."""
    events.append(
        call_event(
            request,
            EventType.TOOL_COMPLETED,
            attempt_id=result.attempt_id,
            payload={"outcome": result.outcome, "status": result.status},
        )
    )
    # A read is safe to redo, so its commit need not wait for the disk; anything that may
    # have changed the world is flushed before the model can observe it.
    redo_safe = authorized is not None and authorized.spec.effect == "read"
    final = commit(deps.store, key, result, events, locked, durable=not redo_safe, fence=fence)
    if final.outcome == "unknown" and authorized is not None:
        mark_unresolved(deps.store, request, authorized, final.model_dump(mode="json"))
    return Finished(final, tuple(e.event_id for e in events))
