"""Signed approval tokens: forged, expired or bound to another call, they are refused."""

from __future__ import annotations

import time

import pytest

from execgraph.nodes.executor.tokens import issue_token, verify_token
from execgraph.state.errors import ApprovalTokenInvalid

SECRET = b"stage-secret"


def test_tokens_refuse_forgery_expiry_and_other_arguments() -> None:
    token = issue_token(SECRET, tool_key="launch@1.0.0", args_hash="h1", ttl_s=60)
    assert verify_token(SECRET, token, tool_key="launch@1.0.0", args_hash="h1")
    for kwargs in (
        {"tool_key": "launch@1.0.0", "args_hash": "h2"},
        {"tool_key": "launch@2.0.0", "args_hash": "h1"},
    ):
        with pytest.raises(ApprovalTokenInvalid):
            verify_token(SECRET, token, **kwargs)
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(b"other-secret", token, tool_key="launch@1.0.0", args_hash="h1")
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(SECRET, token, tool_key="launch@1.0.0", args_hash="h1", now=time.time() + 61)
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(SECRET, "garbage", tool_key="launch@1.0.0", args_hash="h1")
