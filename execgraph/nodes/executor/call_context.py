"""The context a tool runs with: its deadline, its live output, where its artifacts go.

Built once per attempt from the request and the executor's settings; what a tool emits
becomes a ``tool.output`` event of the call (kept with its commit) and, when the call runs
inside a LangGraph node, a custom stream chunk the caller sees at once.
"""

from __future__ import annotations

import contextvars
import threading
import time
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer

from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import Event, EventType
from execgraph.tools.invocation import InvokeContext

__all__ = ["call_context"]


def call_context(
    request: ToolExecutionRequest,
    deps: ExecutorDeps,
    attempt_id: str,
    key: str,
    timeout_s: float | None,
    sink: list[Event],
) -> InvokeContext:
    """The context ``request``'s tool runs with under ``attempt_id`` and ``key``.

    Its deadline is the request's, cut to ``timeout_s`` (or the executor's default); what
    the tool emits is logged to ``sink`` as ``tool.output`` events and streamed live.
    """
    deadline = request.deadline
    limit = time.time() + (timeout_s or deps.default_timeout_s)
    deadline = limit if deadline is None else min(deadline, limit)
    try:
        writer = get_stream_writer()
    except RuntimeError:
        writer = None
    # Tools emit from their own threads; LangGraph's writer needs the node's context, and
    # one context cannot be entered by two threads at once (stdout and stderr readers).
    node_context, entering = contextvars.copy_context(), threading.Lock()
    counter = iter(range(1_000_000_000))

    def emit(kind: str, payload: dict[str, Any]) -> None:
        seq = next(counter)
        sink.append(
            call_event(
                request,
                EventType.TOOL_OUTPUT,
                attempt_id=attempt_id,
                seq=seq,
                payload={"kind": kind, **payload},
            )
        )
        if writer is not None:
            try:
                with entering:
                    node_context.run(writer, {"call_id": request.call_id, "kind": kind, **payload})
            except Exception:  # live progress is best effort; it never fails the tool
                pass

    def put_artifact(data: bytes, kind: str) -> str:
        return deps.store.put_artifact(data, kind=kind, run_id=request.run_id)

    return InvokeContext(
        run_id=request.run_id,
        call_id=request.call_id,
        attempt_id=attempt_id,
        workspace_root=Path(request.workspace.root),
        idempotency_key=key,
        deadline=deadline,
        output_budget=deps.output_budget,
        data_scope=tuple(request.data_scope),
        trace={"run_id": request.run_id, "turn_id": request.turn_id, "call_id": request.call_id},
        emit=emit,
        put_artifact=put_artifact,
    )
