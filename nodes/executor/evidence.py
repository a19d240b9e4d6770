"""Stage 9 — evidence: collect what the adapter observed and verify writes by reading back.

An HTTP 200 or a returned "ok" is an observation; a read-after-write that finds the
intended state is evidence. A failed verification turns success into a typed failure
(the effect is committed but not as intended), never into silence. What a ``verify``
check raises that execgraph cannot name goes to ``report`` (the developer); the model is
told only that verification could not run.
"""

from __future__ import annotations

from dataclasses import replace

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.nodes.executor.outcome import error_of
from execgraph.nodes.executor.raised import Report
from execgraph.nodes.executor.reconcile import reconcile_settled
from execgraph.nodes.executor.stages import Settled
from execgraph.state.contracts import Outcome
from execgraph.state.errors import ExecGraphError, ObservationStatus, VerificationError
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["gather_evidence"]


def gather_evidence(
    spec: ToolSpec,
    args: BaseModel,
    settled: Settled,
    output: AdapterOutput | None,
    ctx: InvokeContext,
    report: Report | None = None,
) -> Settled:
    """Add read-after-write evidence to a successful write; reconcile an unknown outcome."""
    settled = reconcile_settled(spec, args, settled, ctx, report)
    if (
        settled.outcome is not Outcome.SUCCEEDED
        or spec.verify is None
        or output is None
        or settled.reconciled
    ):
        return settled
    try:
        extra = tuple(spec.verify(args, output, ctx))
    except GraphBubbleUp:
        raise
    except Exception as exc:
        if isinstance(exc, ExecGraphError):
            err = exc
        else:
            err = VerificationError("read-after-write verification could not run")
            if report is not None:
                report("verify", exc)
        return replace(
            settled,
            outcome=Outcome.FAILED,
            status=ObservationStatus.PERMANENT_ERROR,
            error=error_of(VerificationError(err.message)),
        )
    return replace(settled, evidence=settled.evidence + extra)
