"""Stage 8 — outcome: what the adapter did, as a typed settlement; and whether to try again.

The rules that keep "executed" and "succeeded" apart: a typed error means nothing was
committed; a lost response or a deadline hit while a write ran means the effect is
*unknown*; a read that timed out is merely retryable; bulky data goes to the artifact
store and the result keeps a bounded preview and the ref; data beyond the tool's
``max_result_bytes`` is not stored at all (the artifact keeps that much, the result its
full size and SHA-256). Whatever the tool returned is made storable first
(:mod:`execgraph.state.safe_values`): a value no JSON can hold becomes a typed value, and
the call settles as it would have.

A failure is tried again (:func:`retry_delay`) only when it says a retry may help, only
for a tool whose retry policy allows it (a read, or a write that declares itself
idempotent, see :mod:`execgraph.tools.retry`), only while the call's deadline leaves room
for the wait, and only within the tool calls the run's budget left for it. An
``unknown`` outcome is never retried: it is not a failure, it is a question. Nor is a
``ModelRetry`` (or LangChain's ``ToolException``): it tells the model what to change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from execgraph.nodes.executor.stages.invoke import Invoked
from execgraph.state.contracts import Evidence, Outcome, PartialProgress, SideEffect, ToolError
from execgraph.state.errors import (
    ExecGraphError,
    ModelRetry,
    ObservationStatus,
    Phase,
    ResponseLostError,
    ToolCancelled,
)
from execgraph.state.safe_values import safe_dumps
from execgraph.tools.invocation import AdapterOutput, InvokeContext, output_of
from execgraph.tools.retry import RetryPolicy
from execgraph.tools.spec import DEFAULT_MAX_RESULT_BYTES, ToolSpec

__all__ = ["Settled", "bound_data", "error_of", "retry_delay", "settle"]


@dataclass(frozen=True)
class Settled:
    """The outcome of one call before evidence and commit."""

    outcome: Outcome
    status: ObservationStatus
    side_effect: SideEffect
    data: Any = None
    error: ToolError | None = None
    evidence: tuple[Evidence, ...] = ()
    truncated: bool = False
    partial: PartialProgress | None = None
    reconciled: bool = False
    artifact: Any = None  # the tool's, for the application (AdapterOutput.artifact)


def error_of(exc: ExecGraphError) -> ToolError:
    """The ToolError for a typed exception: its message is ours, never foreign text (but a
    ``ModelRetry``'s, which a tool wrote for the model, bounded)."""
    return ToolError(
        type=exc.type,
        phase=exc.phase,
        retryable=exc.retryable,
        message=exc.message,
        retry_after_s=getattr(exc, "retry_after_s", None),
    )


def bound_data(
    data: Any,
    budget: int,
    put_artifact: Callable[[bytes, str], str],
    limit: int = DEFAULT_MAX_RESULT_BYTES,
) -> tuple[Any, bool]:
    """JSON-safe data within ``budget`` bytes; larger data is stored and previewed, and
    only its first ``limit`` bytes are stored (with the whole one's size and SHA-256)."""
    safe, text = safe_dumps(data)
    raw = text.encode()
    if len(raw) <= budget:
        return safe, False
    preview = text[: max(0, budget // 4)]
    if len(raw) <= limit:
        return {"artifact": put_artifact(raw, "tool_data"), "preview": preview}, True
    ref = put_artifact(raw[:limit], "tool_data_truncated")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    cut = {"artifact": ref, "preview": preview, "size": len(raw), "stored": limit}
    return {**cut, "sha256": digest}, True


def _timed_out(spec: ToolSpec) -> Settled:
    if spec.effect == "read":
        return Settled(
            Outcome.FAILED,
            ObservationStatus.RETRYABLE_ERROR,
            SideEffect(attempted=True, committed=False, summary="read timed out"),
            error=ToolError(
                type="DeadlineExceeded",
                phase=Phase.EXECUTE,
                retryable=True,
                message="the tool did not finish before its deadline",
            ),
        )
    lost = ResponseLostError("the deadline passed while the tool ran; its effect is unknown")
    return Settled(
        Outcome.UNKNOWN,
        ObservationStatus.UNKNOWN,
        SideEffect(attempted=True, committed=None, summary="timed out during a write"),
        error=error_of(lost),
    )


def _abandoned_on_cancel(spec: ToolSpec) -> Settled:
    """A cancel request the tool ignored: a read changed nothing; a write may have acted."""
    error = error_of(
        ToolCancelled("cancelled on request; the tool did not stop within its grace period")
    )
    if spec.effect == "read":
        effect = SideEffect(attempted=True, committed=False, summary="cancelled")
        return Settled(Outcome.CANCELLED, ObservationStatus.CANCELLED, effect, error=error)
    effect = SideEffect(attempted=True, committed=None, summary="cancelled during a write")
    return Settled(Outcome.UNKNOWN, ObservationStatus.UNKNOWN, effect, error=error)


def _observed(
    exc: ExecGraphError, budget: int, put_artifact: Callable[[bytes, str], str], limit: int
) -> dict[str, Any]:
    """Bounded data and evidence an adapter observed before it raised (stderr, a body)."""
    output = output_of(exc)
    if output is None:
        return {}
    data, truncated = bound_data(output.data, budget, put_artifact, limit)
    return {"data": data, "evidence": output.evidence, "truncated": truncated or output.truncated}


def settle(
    spec: ToolSpec, invoked: Invoked, budget: int, put_artifact: Callable[[bytes, str], str]
) -> Settled:
    """Classify what the adapter did."""
    if invoked.timed_out:
        return _timed_out(spec)
    if invoked.running is not None:  # cancelled on request, and it did not stop
        return _abandoned_on_cancel(spec)
    exc = invoked.error
    if isinstance(exc, ExecGraphError):
        seen = _observed(exc, budget, put_artifact, spec.max_result_bytes)
        if exc.status is ObservationStatus.UNKNOWN:
            effect = SideEffect(attempted=True, committed=None, summary="response lost")
            return Settled(Outcome.UNKNOWN, exc.status, effect, error=error_of(exc), **seen)
        if exc.status is ObservationStatus.CANCELLED:
            committed = False if spec.effect == "read" else None
            effect = SideEffect(attempted=True, committed=committed, summary="cancelled")
            return Settled(Outcome.CANCELLED, exc.status, effect, error=error_of(exc), **seen)
        effect = SideEffect(attempted=True, committed=False, summary="failed before committing")
        return Settled(Outcome.FAILED, exc.status, effect, error=error_of(exc), **seen)
    output = invoked.output
    assert output is not None  # invoke() returns an output, an error, or timed_out
    data, truncated = bound_data(output.data, budget, put_artifact, spec.max_result_bytes)
    truncated = truncated or output.truncated
    if output.artifact is not None:  # bounded as data is; the model never reads it
        artifact, _ = bound_data(output.artifact, budget, put_artifact, spec.max_result_bytes)
        return replace(_settled(spec, output, data, truncated), artifact=artifact)
    return _settled(spec, output, data, truncated)


def _settled(spec: ToolSpec, output: AdapterOutput, data: Any, truncated: bool) -> Settled:
    """A call that returned ``output`` (its data bounded), as an outcome."""
    if output.partial is not None:
        effect = SideEffect(attempted=True, committed=True, summary=output.summary or "partial")
        return Settled(
            Outcome.PARTIAL,
            ObservationStatus.PARTIAL,
            effect,
            data=data,
            evidence=output.evidence,
            truncated=truncated,
            partial=output.partial,
        )
    if output.committed is None and spec.effect != "read":
        effect = SideEffect(attempted=True, committed=None, summary=output.summary or "unconfirmed")
        return Settled(
            Outcome.UNKNOWN,
            ObservationStatus.UNKNOWN,
            effect,
            data=data,
            evidence=output.evidence,
            truncated=truncated,
        )
    committed = bool(output.committed) if spec.effect != "read" else False
    effect = SideEffect(
        attempted=spec.effect != "read", committed=committed, summary=output.summary
    )
    return Settled(
        Outcome.SUCCEEDED,
        ObservationStatus.OK,
        effect,
        data=data,
        evidence=output.evidence,
        truncated=truncated,
    )


def retry_delay(
    spec: ToolSpec, settled: Settled, attempt: int, ctx: InvokeContext, allowance: int | None
) -> float | None:
    """The wait before trying ``attempt + 1``, or None when the call ends as it is."""
    policy = spec.retry
    if not isinstance(policy, RetryPolicy):
        return None
    if settled.outcome != Outcome.FAILED or settled.status != ObservationStatus.RETRYABLE_ERROR:
        return None
    if settled.error is not None and settled.error.type == ModelRetry.__name__:
        return None  # written for the model: the same arguments would get the same answer
    if ctx.cancel.is_set() or (allowance is not None and attempt > allowance):
        return None
    delay = policy.delay(attempt, settled.error.retry_after_s if settled.error else None)
    remaining = ctx.remaining_s()
    if delay is None or (remaining is not None and delay >= remaining):
        return None
    return delay
