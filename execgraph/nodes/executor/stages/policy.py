"""Stage 4a — policy: allow, require approval, or deny; authorization precedes any effect.

A signed approval token given out of band satisfies ``require_approval`` for exactly the
tool version and normalized arguments it was issued for; it never overrides a deny.

A call the model itself asked a person to approve (``request_approval``) requires approval
whatever the policy would allow (:func:`asked_first`): a model may be more careful than its
policy, never less — a deny stays a deny.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from execgraph.nodes.executor.call import Authorized, Validated
from execgraph.nodes.executor.tokens import verify_token
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import PolicyDenied
from execgraph.tools.policy import PolicyDecision, PolicyEngine
from execgraph.tools.provenance import ArgumentProvenance
from execgraph.tools.spec import ToolSpec

__all__ = ["ASKED_RULE", "asked_first", "effective_engine", "policy_verdict"]

ASKED_RULE = "model:request_approval"
"""The rule a call is sent to a person by when only the model asked for it."""


def policy_verdict(
    request: ToolExecutionRequest,
    spec: ToolSpec,
    validated: Validated,
    engine: PolicyEngine,
    secret: bytes,
    provenance: Mapping[str, ArgumentProvenance] | None = None,
) -> Authorized:
    """The policy verdict for a validated call, inside the task contract's allowed actions.

    ``provenance`` labels the arguments (:mod:`execgraph.nodes.provenance`); the argument
    rules read it, and it travels with the authorization to the approval request.

    Raises:
        PolicyDenied: a rule or default denies the call.
        ApprovalTokenInvalid: a token was given but does not verify for this call.
    """
    if request.allowed_actions is not None and spec.name not in request.allowed_actions:
        raise PolicyDenied(f"{spec.name} is not allowed here (task contract or current step)")
    engine = effective_engine(request, engine)
    decision = engine.decide(spec, validated.normalized.arguments, request, provenance)
    if decision.verdict == "deny":
        # a no to the effect sticks (later calls are held to it); a refusal that says
        # what would be accepted is a correction, not a no
        raise PolicyDenied(
            f"policy denies {spec.name}: {decision.reason}", sticks=not decision.refusal
        )
    decision = asked_first(request, decision)
    if decision.verdict == "require_approval" and request.approval_token:
        token_id = verify_token(
            secret,
            request.approval_token,
            tool_key=spec.key,
            args_hash=validated.normalized.args_hash,
        )
        approved = PolicyDecision("allow", "approved by signed token", decision.rule)
        return Authorized(spec, validated, approved, token_id=token_id, provenance=provenance)
    return Authorized(spec, validated, decision, provenance=provenance)


def effective_engine(request: ToolExecutionRequest, engine: PolicyEngine) -> PolicyEngine:
    """The engine with the task contract's own rules added."""
    return engine.with_rules(request.approval_rules) if request.approval_rules else engine


def asked_first(request: ToolExecutionRequest, decision: PolicyDecision) -> PolicyDecision:
    """``decision``, sent to a person when the model asked for their approval of the call
    (``request.approval_asked``): an allowed call then requires approval, for the model's
    reason; one the policy already sends to a person is shown the model's reason too."""
    asked = request.approval_asked
    if asked is None or decision.verdict == "deny":
        return decision
    why = f"the model asks a person to approve this call first: {asked or 'no reason given'}"
    if decision.verdict == "require_approval":
        return replace(decision, reason=f"{decision.reason}; {why}")
    return PolicyDecision("require_approval", why, ASKED_RULE)
