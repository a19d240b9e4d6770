"""The errors that say "try again": ModelRetry (the tool's bounded words for the model) and
TransientError (retryable, with the server's Retry-After)."""

from __future__ import annotations

import pytest

from execgraph.state import errors
from execgraph.state.contracts import ToolError
from execgraph.state.errors import AdapterError, ObservationStatus, Phase, TransientError


def test_model_retry_is_a_tools_bounded_message_for_the_model() -> None:
    err = errors.ModelRetry("use an ISO date such as 2024-05-01")
    assert err.message == "use an ISO date such as 2024-05-01"  # the tool's own words
    assert isinstance(err, AdapterError) and err.phase is Phase.EXECUTE
    assert err.status is ObservationStatus.RETRYABLE_ERROR and err.retryable is True
    long = errors.ModelRetry("z" * 10_000)
    assert len(long.message) == errors.MODEL_RETRY_CHARS and long.message.endswith("…")
    assert "ModelRetry" in (errors.__doc__ or "")


def test_model_retry_from_a_tool_exception_keeps_its_first_argument() -> None:
    from langchain_core.tools import ToolException

    err = errors.ModelRetry.from_tool_exception(ToolException("query too broad", 42))
    assert err.message == "query too broad"
    assert errors.ModelRetry.from_tool_exception(ToolException()).message != ""


def test_transient_error_keeps_retry_after() -> None:
    err = TransientError("rate limited", retry_after_s=2.5)
    assert err.retry_after_s == 2.5
    assert err.retryable is True
    assert err.message == "rate limited"
    assert err.phase is Phase.EXECUTE


def test_transient_error_retry_after_defaults_to_none() -> None:
    assert TransientError("busy").retry_after_s is None


def test_transient_error_retry_after_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        TransientError("busy", 2.5)  # type: ignore[call-arg]


def test_transient_error_retry_after_fits_a_tool_error() -> None:
    err = TransientError("rate limited", retry_after_s=1.0)
    tool_error = ToolError(
        type=err.type,
        phase=err.phase,
        retryable=err.retryable,
        message=err.message,
        retry_after_s=err.retry_after_s,
    )
    assert tool_error.retry_after_s == 1.0
