"""Stage 4a — policy: allow, require approval, or deny; authorization precedes any effect.

A signed approval token given out of band satisfies ``require_approval`` for exactly the
tool version and normalized arguments it was issued for; it never overrides a deny.
"""

from __future__ import annotations

from execgraph.nodes.executor.call import Authorized, Validated
from execgraph.nodes.executor.tokens import verify_token
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import PolicyDenied
from execgraph.tools.policy import PolicyDecision, PolicyEngine
from execgraph.tools.spec import ToolSpec

__all__ = ["policy_verdict"]


def policy_verdict(
    request: ToolExecutionRequest,
    spec: ToolSpec,
    validated: Validated,
    engine: PolicyEngine,
    secret: bytes,
) -> Authorized:
    """The policy verdict for a validated call, inside the task contract's allowed actions.

    Raises:
        PolicyDenied: a rule or default denies the call.
        ApprovalTokenInvalid: a token was given but does not verify for this call.
    """
    if request.allowed_actions is not None and spec.name not in request.allowed_actions:
        raise PolicyDenied(f"{spec.name} is not allowed here (task contract or current step)")
    if request.approval_rules:
        engine = engine.with_rules(request.approval_rules)
    decision = engine.decide(spec, validated.normalized.arguments, request)
    if decision.verdict == "deny":
        raise PolicyDenied(f"policy denies {spec.name}: {decision.reason}")
    if decision.verdict == "require_approval" and request.approval_token:
        token_id = verify_token(
            secret,
            request.approval_token,
            tool_key=spec.key,
            args_hash=validated.normalized.args_hash,
        )
        approved = PolicyDecision("allow", "approved by signed token", decision.rule)
        return Authorized(spec, validated, approved, token_id=token_id)
    return Authorized(spec, validated, decision)
