"""Stage 4b, at a deadline: what an approval that went unanswered past it turns into.

An approval question carries its deadline (``expires_at``, by the store's clock) and its
expiry policy (``on_expiry``, from the task's wait rule for the tool:
:mod:`execgraph.state.waits`). An answer that comes later does not count: the policy
decides instead (:func:`expired`).
"""

from __future__ import annotations

from dataclasses import dataclass

from execgraph.nodes.cancel import request_cancel
from execgraph.nodes.executor.call import Call
from execgraph.state.contracts import ApprovalRequest, ToolExecutionRequest
from execgraph.state.errors import ApprovalStale

__all__ = ["Again", "Escalated", "expired"]


@dataclass(frozen=True)
class Again:
    """Ask again, about ``request`` (a person's edit: a new request, authorized from the
    start), saying why when a target changed while the person decided (``stale``)."""

    request: ToolExecutionRequest
    stale: ApprovalStale | None = None


class Escalated(ApprovalStale):
    """An approval that expired unanswered and is asked again, of ``to``."""

    def __init__(self, message: str, to: str) -> None:
        super().__init__(message)
        self.to = to


def expired(call: Call, shown: ApprovalRequest) -> Again | None:
    """Apply ``shown``'s expiry policy to ``call``, whose question went unanswered past
    its deadline: refuse it (``reject``), refuse it and cancel the run (``cancel``), or
    ask once more, of the policy's ``escalate_to`` (``escalate``)."""
    rule = call.request.wait
    if shown.on_expiry == "escalate" and shown.escalated_to is None:
        to = (rule.escalate_to if rule is not None else "") or "another approver"
        return Again(call.request, stale=Escalated(f"expired unanswered; escalated to {to}", to))
    why = f"the approval of {shown.tool} expired unanswered"
    if shown.on_expiry == "cancel":
        request_cancel(call.deps.store, call.request.run_id, why)
        why += "; the run is cancelled"
    call.authorized, call.refusal = None, ApprovalStale(why)
    return None
