"""When the executor tries a failed call again (see :mod:`execgraph.tools.retry`).

Only a failure that says a retry may help is retried, only for a tool whose policy allows
it (a read, or a write that declares itself idempotent), only while the call's deadline
leaves room for the wait, and only within the tool calls the run's budget left for it.
An ``unknown`` outcome is never retried: it is not a failure, it is a question. Nor is a
``ModelRetry`` (or LangChain's ``ToolException``): it tells the model what to change.
"""

from __future__ import annotations

from execgraph.nodes.executor.stages import Settled
from execgraph.state.contracts import Outcome
from execgraph.state.errors import ModelRetry, ObservationStatus
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.retry import RetryPolicy
from execgraph.tools.spec import ToolSpec

__all__ = ["retry_delay"]


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
