"""Stage 9 — evidence: what a call observed, and read-after-write for writes.

Every successful call leaves evidence. An adapter names its own (a file hash, an HTTP
status, a document); a call whose tool named none — a plain ``@tool_spec`` function, a
LangChain tool — still observed something, so it leaves one *unverified* item of kind
``observation`` (:func:`observation_evidence`): its value is the bounded data the tool
returned, its key ``<tool>:<source_id>`` when that data is an object naming a string
``source_id``, else ``<tool>:<hash of the normalized arguments>``. An observation is not
the fact: it is what one tool returned at one time; only a check the
runtime made itself — a read-after-write that finds the intended state — is *verified*.
The same call seeing the same data again leaves the same item (the loop guard reads it
as no progress); new data is a newer version of it. Whatever a tool names, the runtime
stamps its origin and time (:func:`stamped`): the call that observed it, and when.

A failed verification turns success into a typed failure (the effect is committed but
not as intended), never into silence. What a ``verify`` check raises that execgraph
cannot name goes to ``report`` (the developer); the model is told only that
verification could not run.

An ``unknown`` outcome is reconciled by the tool's probe before this stage
(:mod:`execgraph.nodes.executor.recovery.probe`); a reconciled outcome gathers nothing
more. The call's log then records the side effect it observed, and the reconciliation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from execgraph.nodes.executor.call import Call, Report
from execgraph.nodes.executor.hashing import canonical_json, stable_hash
from execgraph.nodes.executor.stages.outcome import Settled, error_of
from execgraph.state.contracts import Evidence, Outcome
from execgraph.state.errors import ExecGraphError, ObservationStatus, VerificationError
from execgraph.state.events import EventType
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["OBSERVATION", "evidence", "gather_evidence", "observation_evidence", "stamped"]

OBSERVATION = "observation"
"""The kind of the evidence a call leaves when its tool named none."""

_VALUE_CHARS = 500  # an observation's value is a preview: state holds refs, not pages
_SOURCE_CHARS = 200


def evidence(
    call: Call, settled: Settled, output: AdapterOutput | None, ctx: InvokeContext
) -> Settled:
    """The call's evidence (:func:`gather_evidence`); its observed side effect and its
    reconciliation recorded in its log."""
    assert call.authorized is not None
    args = call.authorized.validated.args
    settled = gather_evidence(call.spec, args, settled, output, ctx, call.report)
    settled = replace(settled, evidence=stamped(settled.evidence, ctx.call_id, time.time()))
    if settled.side_effect.attempted:
        call.attempt_event(
            EventType.TOOL_SIDE_EFFECT_OBSERVED, payload=settled.side_effect.model_dump(mode="json")
        )
    if settled.reconciled:
        call.attempt_event(EventType.TOOL_RECONCILED, payload={"outcome": settled.outcome})
    return settled


def stamped(items: Sequence[Evidence], call_id: str, now: float) -> tuple[Evidence, ...]:
    """Each item with its origin and time as the runtime knows them: the call that
    observed it (whatever the tool wrote there) and when (a time the tool gave is kept
    unless it lies in the future; none given is now)."""
    out = []
    for item in items:
        at = now if item.observed_at <= 0 else min(item.observed_at, now)
        if item.call_id != call_id or item.observed_at != at:
            item = item.model_copy(update={"call_id": call_id, "observed_at": at})
        out.append(item)
    return tuple(out)


def gather_evidence(
    spec: ToolSpec,
    args: BaseModel,
    settled: Settled,
    output: AdapterOutput | None,
    ctx: InvokeContext,
    report: Report | None = None,
) -> Settled:
    """Add read-after-write evidence to a successful write, or an observation to a
    success that names no evidence."""
    if settled.outcome is not Outcome.SUCCEEDED or output is None or settled.reconciled:
        return settled
    extra: tuple[Evidence, ...] = ()
    if spec.verify is not None:
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
    evidence = settled.evidence + extra
    if not evidence:
        evidence = (observation_evidence(spec, args, settled.data, settled.truncated, ctx),)
    return replace(settled, evidence=evidence)


def observation_evidence(
    spec: ToolSpec, args: BaseModel, data: Any, truncated: bool, ctx: InvokeContext
) -> Evidence:
    """The unverified evidence of a successful call whose tool named none.

    ``data`` is the call's bounded data (``truncated``: it may be a stored artifact's
    ``{"artifact": ref, "preview": ...}``, whose ref the evidence keeps).
    """
    ref = None
    if truncated and isinstance(data, Mapping) and set(data) == {"artifact", "preview"}:
        ref = str(data["artifact"])
    source = data.get("source_id") if isinstance(data, Mapping) else None
    if isinstance(source, str) and source.strip():
        key = source.strip()[:_SOURCE_CHARS]
    else:
        key = stable_hash(args.model_dump(mode="json"))[:16]
    value = data if isinstance(data, str) else canonical_json(data)
    return Evidence(
        source_id=f"{spec.name}:{key}",
        kind=OBSERVATION,
        value=value[:_VALUE_CHARS],
        ref=ref,
        version=time.time_ns(),  # a newer observation of the same source replaces it
        call_id=ctx.call_id,
        verified=False,
        observed_at=time.time(),
    )
