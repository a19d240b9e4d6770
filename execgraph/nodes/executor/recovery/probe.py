"""Reconcile by probe: decide an unknown or interrupted call from the world, not by retrying.

A tool's ``reconcile`` probe looks at the target (file hash, status endpoint, row) and
answers committed / not committed / cannot tell. Without a probe, a read is safe to run
again and a write stays ``unknown`` until a person decides. A probe that raises proves
nothing either way; what it raised goes to ``report`` (the developer), never the model.
"""

from __future__ import annotations

from dataclasses import replace

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.nodes.executor.call import Report
from execgraph.nodes.executor.stages.outcome import Settled
from execgraph.state.contracts import Outcome, SideEffect, ToolError
from execgraph.state.errors import ObservationStatus, Phase
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["in_doubt", "probe", "reconcile_unknown"]


def probe(
    spec: ToolSpec, args: BaseModel, ctx: InvokeContext, report: Report | None = None
) -> bool | None:
    """Ask the tool's probe whether the effect is committed (None: cannot tell)."""
    if spec.reconcile is None:
        return None
    try:
        output = spec.reconcile(args, ctx)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        if report is not None:
            report("reconcile", exc)
        return None  # a failing probe proves nothing either way
    return None if output is None else output.committed


def reconcile_unknown(
    spec: ToolSpec,
    args: BaseModel,
    settled: Settled,
    ctx: InvokeContext,
    report: Report | None = None,
) -> Settled:
    """Resolve an ``unknown`` (or cancelled write) settlement through the probe, if possible."""
    unresolved = settled.outcome is Outcome.UNKNOWN or (
        settled.outcome is Outcome.CANCELLED and settled.side_effect.committed is None
    )
    if not unresolved:
        return settled
    committed = probe(spec, args, ctx, report)
    if committed is None:
        return settled
    if committed:
        return replace(
            settled,
            outcome=Outcome.SUCCEEDED if settled.outcome is Outcome.UNKNOWN else Outcome.PARTIAL,
            status=ObservationStatus.OK
            if settled.outcome is Outcome.UNKNOWN
            else ObservationStatus.PARTIAL,
            side_effect=SideEffect(attempted=True, committed=True, summary="reconciled: committed"),
            error=None,
            reconciled=True,
        )
    failed = settled.outcome is Outcome.UNKNOWN
    return replace(
        settled,
        outcome=Outcome.FAILED if failed else Outcome.CANCELLED,
        status=ObservationStatus.RETRYABLE_ERROR if failed else ObservationStatus.CANCELLED,
        side_effect=SideEffect(attempted=True, committed=False, summary="reconciled: no effect"),
        error=ToolError(
            type="ReconciledNoEffect",
            phase=Phase.EXECUTE,
            retryable=failed,
            message="the call did not take effect (checked by the tool's reconcile probe)",
        ),
        reconciled=True,
    )


def in_doubt(
    spec: ToolSpec,
    args: BaseModel,
    ctx: InvokeContext,
    report: Report | None = None,
    *,
    may_still_run: bool = False,
) -> Settled | None:
    """Settle a record that started but never committed (a crash); None means run it again.

    Reads, and writes the probe proves absent, are safe to run again; a proven write is
    settled as succeeded; anything else is ``unknown`` and is never retried blindly. With
    ``may_still_run`` (taken over because its lease lapsed, its owner not proved gone: a
    stalled worker may wake and finish its attempt), a write the probe finds absent is
    run again only if it is idempotent: the probe cannot see an effect still to come.
    """
    if spec.effect == "read":
        return None
    committed = probe(spec, args, ctx, report)
    if committed is False and may_still_run and not spec.idempotent:
        effect = SideEffect(
            attempted=True, committed=None, summary="taken over; its owner may still act"
        )
        return Settled(
            Outcome.UNKNOWN,
            ObservationStatus.UNKNOWN,
            effect,
            error=ToolError(
                type="ResponseLostError",
                phase=Phase.EXECUTE,
                message="the worker running this call stopped answering and was taken over; "
                "it may still be running the call, so it is not run again here; a person "
                "must reconcile it",
            ),
        )
    if committed is False:
        return None
    if committed:
        effect = SideEffect(attempted=True, committed=True, summary="reconciled after a crash")
        return Settled(Outcome.SUCCEEDED, ObservationStatus.OK, effect, reconciled=True)
    effect = SideEffect(attempted=True, committed=None, summary="interrupted; effect unknown")
    return Settled(
        Outcome.UNKNOWN,
        ObservationStatus.UNKNOWN,
        effect,
        error=ToolError(
            type="ResponseLostError",
            phase=Phase.EXECUTE,
            message="the call was interrupted before it committed and no probe can tell "
            "whether it took effect; a person must reconcile it",
        ),
    )
