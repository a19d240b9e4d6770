"""A call's attempts: invoke the tool, settle what it did, and try again while allowed.

Runs once the call holds its record and its locks. Each attempt is invoked (:mod:`.invoke`)
and settled (:mod:`.outcome`); a failure is tried again only as :mod:`.retries` allows and
never once the tool ignored its stop signal or the run was cancelled. A tool that pauses
the run (``interrupt()``) marks its record paused (:mod:`.paused`) on its way out. The last
attempt's outcome then gathers its evidence (:mod:`.evidence`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from langgraph.errors import GraphInterrupt

from execgraph.nodes.cancel import cancel_requested
from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.evidence import gather_evidence
from execgraph.nodes.executor.invoke import invoke
from execgraph.nodes.executor.outcome import settle
from execgraph.nodes.executor.paused import mark_paused
from execgraph.nodes.executor.raised import Raised
from execgraph.nodes.executor.retries import retry_delay
from execgraph.nodes.executor.stages import Invoked, Locked, Settled, Staged
from execgraph.state.events import EventType
from execgraph.tools.invocation import InvokeContext

__all__ = ["Attempted", "run_attempts"]


@dataclass(frozen=True)
class Attempted:
    """The last attempt's invocation, its settled outcome (evidence gathered), and how many
    attempts were made."""

    invoked: Invoked
    settled: Settled
    attempts: int


def run_attempts(
    staged: Staged, deps: ExecutorDeps, key: str, ctx: InvokeContext, locked: Locked, raised: Raised
) -> Attempted:
    """Log ``tool.started``, then invoke and settle until no retry is due; the retries,
    the cancel and the observed side effect are logged to the call's events."""
    request, attempt_id, events = staged.request, staged.attempt_id, staged.events
    spec, args = staged.authorized.spec, staged.authorized.validated.args
    events.append(
        call_event(
            request, EventType.TOOL_STARTED, attempt_id=attempt_id, payload={"tool": spec.key}
        )
    )

    def stopping(why: str) -> None:  # logged at once: the call is cancelling from now
        event = call_event(
            request, EventType.TOOL_CANCELLING, attempt_id=attempt_id, payload={"reason": why}
        )
        events.append(event)
        deps.store.append_events([event])

    cancelled = partial(cancel_requested, deps.store, request.run_id)
    attempts = 1
    while True:
        try:
            invoked = invoke(spec, args, ctx, deps.pool, cancelled, on_stop=stopping)
        except GraphInterrupt:  # the tool called interrupt(): paused.py
            mark_paused(deps.store, key, attempt_id, locked)
            raise
        if invoked.raised is not None:
            raised("invoke", invoked.raised)
        settled = settle(spec, invoked, deps.output_budget, ctx.put_artifact)
        delay = retry_delay(spec, settled, attempts, ctx, request.retry_allowance)
        if delay is None or invoked.running is not None:
            break
        events.append(
            call_event(
                request,
                EventType.TOOL_RETRIED,
                attempt_id=attempt_id,
                seq=attempts,
                payload={
                    "attempt": attempts,
                    "after_s": round(delay, 3),
                    "error": settled.error.type if settled.error else None,
                },
            )
        )
        time.sleep(delay)
        if cancelled():
            break
        attempts += 1
    settled = gather_evidence(spec, args, settled, invoked.output, ctx, raised)
    if settled.side_effect.attempted:
        events.append(
            call_event(
                request,
                EventType.TOOL_SIDE_EFFECT_OBSERVED,
                attempt_id=attempt_id,
                payload=settled.side_effect.model_dump(mode="json"),
            )
        )
    if settled.reconciled:
        events.append(
            call_event(
                request,
                EventType.TOOL_RECONCILED,
                attempt_id=attempt_id,
                payload={"outcome": settled.outcome},
            )
        )
    return Attempted(invoked, settled, attempts)
