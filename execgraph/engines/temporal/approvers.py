"""Who answered a run on Temporal: answers signed with the workers' approval key.

Anyone who can reach a Temporal namespace can send a workflow an update, and whatever
name it puts in an answer would be recorded as the approver. So a run on Temporal takes
an answer only when it comes with a token signed by a holder of the approval key the
workers share (``$EXECGRAPH_APPROVAL_SECRET``, or the ``approval.key`` of their home):
the token binds the run id, the exact answers (their sha256) and the approver's name,
and expires :data:`TOKEN_TTL_S` after it was made. The workers' :class:`ApproverCheck`
verifies it in the ``decide`` update's validation, judged by ``workflow.now()``, before
the workflow accepts the update; the answers then carry the signed name as their
approver, never a name the client wrote. A client without the key cannot answer.

The key authenticates a holder of the key, not a person: whoever holds it may sign any
name. Where people must be told apart, give each approver a client of their own behind
Temporal's authorizer and claim mapper, and keep the key with the approving service.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from execgraph.state.errors import ApprovalTokenInvalid

__all__ = ["DECIDE", "TOKEN_TTL_S", "ApproverCheck", "approver_of", "sign", "verify"]

DECIDE = "decide"
"""The workflow update that carries answers."""

TOKEN_TTL_S = 600.0
"""How long a signed answer is accepted after it was made (clocks may differ this much)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(answers: Mapping[str, Any]) -> str:
    body = json.dumps(dict(answers), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def sign(key: bytes, run_id: str, answers: Mapping[str, Any], approver: str, now: float) -> str:
    """A token saying a holder of ``key`` gave ``answers`` to run ``run_id`` as
    ``approver``, at ``now`` (seconds since the epoch)."""
    claims = {
        "run": run_id,
        "answers": _digest(answers),
        "approver": approver,
        "iat": now,
        "nonce": secrets.token_hex(8),
    }
    body = _b64(json.dumps(claims, sort_keys=True).encode())
    return f"{body}.{_b64(hmac.new(key, body.encode(), hashlib.sha256).digest())}"


def _claims(token: str) -> dict[str, Any]:
    body = token.split(".", 1)[0]
    found = json.loads(_unb64(body))
    return found if isinstance(found, dict) else {}


def verify(key: bytes, token: str, run_id: str, answers: Mapping[str, Any], now: float) -> str:
    """The approver ``token`` names, if a holder of ``key`` signed exactly ``answers`` for
    ``run_id`` within :data:`TOKEN_TTL_S` of ``now``.

    Raises:
        ApprovalTokenInvalid: unsigned, forged, malformed, for other answers, or too old.
    """
    if not token:
        raise ApprovalTokenInvalid(
            "the answers are not signed: a client needs the workers' approval key"
        )
    try:
        body, sig = token.split(".", 1)
        genuine = hmac.compare_digest(
            sig, _b64(hmac.new(key, body.encode(), hashlib.sha256).digest())
        )
        claims = _claims(token) if genuine else {}
    except (ValueError, TypeError, UnicodeDecodeError):
        raise ApprovalTokenInvalid("the answers' signature is malformed") from None
    if not genuine:
        raise ApprovalTokenInvalid("the answers are not signed with the workers' approval key")
    if claims.get("run") != run_id or claims.get("answers") != _digest(answers):
        raise ApprovalTokenInvalid("the signature was made for other answers or another run")
    issued = claims.get("iat")
    if not isinstance(issued, int | float) or abs(now - issued) > TOKEN_TTL_S:
        raise ApprovalTokenInvalid(
            f"the signed answers are more than {TOKEN_TTL_S:g} s old (or new)"
        )
    return str(claims.get("approver") or "")


def approver_of(token: str) -> str:
    """The approver a token names (read, not verified: the update's validation did)."""
    try:
        return str(_claims(token).get("approver") or "")
    except (ValueError, TypeError, UnicodeDecodeError):
        return ""


class ApproverCheck(Interceptor):
    """A worker interceptor refusing every ``decide`` update not signed with ``key``."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        key = self.key

        class _Check(WorkflowInboundInterceptor):
            def handle_update_validator(self, input: HandleUpdateInput) -> None:
                if input.update == DECIDE:
                    decision = input.args[0] if input.args else None
                    token = str(getattr(decision, "token", "") or "")
                    answers = getattr(decision, "answers", None) or {}
                    now = workflow.now().timestamp()
                    try:
                        verify(key, token, workflow.info().workflow_id, answers, now)
                    except ApprovalTokenInvalid as exc:
                        raise ApplicationError(exc.message, type="NotSigned") from None
                self.next.handle_update_validator(input)

        return _Check
