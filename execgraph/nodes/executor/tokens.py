"""Signed, single-use approval tokens for approval given out of band.

A token binds one approval to ``tool@version`` and the normalized-args hash, carries an
expiry, and is HMAC-signed with the executor's secret; the store makes it single-use.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid

from execgraph.state.errors import ApprovalTokenInvalid

__all__ = ["issue_token", "verify_token"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue_token(secret: bytes, *, tool_key: str, args_hash: str, ttl_s: float = 3600.0) -> str:
    """A token approving exactly ``tool_key`` with arguments hashing to ``args_hash``."""
    claims = {
        "tid": uuid.uuid4().hex,
        "tool": tool_key,
        "args": args_hash,
        "exp": time.time() + ttl_s,
    }
    body = _b64(json.dumps(claims, sort_keys=True).encode())
    sig = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
    return f"{body}.{sig}"


def verify_token(
    secret: bytes, token: str, *, tool_key: str, args_hash: str, now: float | None = None
) -> str:
    """The token's id if it is genuine, unexpired and bound to this exact call.

    Single use is enforced separately by the store (``use_approval_token``).

    Raises:
        ApprovalTokenInvalid: forged, malformed, expired, or bound to another tool/arguments.
    """
    try:
        body, sig = token.split(".", 1)
        expected = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
        genuine = hmac.compare_digest(sig, expected)
        claims = json.loads(_unb64(body)) if genuine else {}
    except (ValueError, TypeError):
        raise ApprovalTokenInvalid("approval token is malformed") from None
    if not genuine:
        raise ApprovalTokenInvalid("approval token signature does not verify")
    if claims.get("tool") != tool_key or claims.get("args") != args_hash:
        raise ApprovalTokenInvalid(
            "approval token was issued for another tool version or arguments"
        )
    if float(claims.get("exp", 0)) <= (time.time() if now is None else now):
        raise ApprovalTokenInvalid("approval token has expired")
    return str(claims["tid"])
