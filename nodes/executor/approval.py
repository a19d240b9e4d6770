"""Stage 4b — approval: what a person is asked, and whether their answer still applies.

The request binds tool version and normalized-args hash. Between asking and answering the
world may change, so on resume the call is re-resolved and re-validated and must still
match what was shown: same version, same hash, expected state still holding, not expired.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import ValidationError

from execgraph.nodes.executor.stages import Authorized
from execgraph.state.contracts import ApprovalDecision, ApprovalRequest, ToolExecutionRequest
from execgraph.state.errors import ApprovalStale

__all__ = ["approval_request", "check_fresh", "parse_decision"]


def approval_request(
    request: ToolExecutionRequest, authorized: Authorized, *, ttl_s: float, now: float | None = None
) -> ApprovalRequest:
    """The interrupt payload for ``authorized``; it expires at the TTL or the deadline."""
    current = time.time() if now is None else now
    expires = current + ttl_s
    if request.deadline is not None:
        expires = min(expires, request.deadline)
    normalized = authorized.validated.normalized
    return ApprovalRequest(
        run_id=request.run_id,
        call_id=request.call_id,
        tool=authorized.spec.name,
        version=authorized.spec.version,
        effect=authorized.spec.effect,
        arguments=normalized.arguments,
        args_hash=normalized.args_hash,
        reason=authorized.decision.reason,
        expires_at=expires,
    )


def parse_decision(value: Any) -> ApprovalDecision:
    """Read a resume value; anything malformed is a rejection (fail closed)."""
    if isinstance(value, str):
        value = {"action": value}
    try:
        return ApprovalDecision.model_validate(value)
    except ValidationError:
        return ApprovalDecision(action="reject", reason="malformed approval decision")


def check_fresh(
    approved: ApprovalRequest, current: Authorized, *, now: float | None = None
) -> None:
    """Raise ApprovalStale unless ``current`` is still exactly what was approved."""
    if (
        approved.expires_at is not None
        and (time.time() if now is None else now) > approved.expires_at
    ):
        raise ApprovalStale("the approval arrived after it expired")
    if current.spec.version != approved.version:
        raise ApprovalStale(
            f"tool {approved.tool} changed from {approved.version} to {current.spec.version}"
        )
    if current.validated.normalized.args_hash != approved.args_hash:
        raise ApprovalStale("the arguments changed after approval was requested")
