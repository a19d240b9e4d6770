"""ToolRaised: a foreign exception reaches the model by its type name, never by its text."""

from __future__ import annotations

import pytest

from execgraph.state.contracts import ToolError
from execgraph.state.errors import AdapterError, ObservationStatus, Phase, ToolRaised

FAKE_SECRET = "sk-live-4f9c2e7d1b8a6f3e"


class _VendorError(RuntimeError):
    pass


def _raise_and_wrap(exc: BaseException) -> ToolRaised:
    try:
        raise exc
    except BaseException as caught:
        return ToolRaised.from_exception(caught)


@pytest.mark.parametrize(
    "foreign",
    [
        _VendorError(f"auth failed for token {FAKE_SECRET}"),
        ValueError(f"password={FAKE_SECRET}"),
        KeyError(FAKE_SECRET),
        OSError(13, f"permission denied: /home/u/.ssh/{FAKE_SECRET}"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_tool_raised_keeps_the_type_name_but_not_the_text(foreign: BaseException) -> None:
    wrapped = _raise_and_wrap(foreign)
    assert isinstance(wrapped, ToolRaised)
    assert isinstance(wrapped, AdapterError)
    assert type(foreign).__name__ in wrapped.message
    for text in (wrapped.message, str(wrapped), repr(wrapped), *map(str, wrapped.args)):
        assert FAKE_SECRET not in text
    assert wrapped.type == "ToolRaised"
    assert wrapped.phase is Phase.EXECUTE
    assert wrapped.status is ObservationStatus.PERMANENT_ERROR
    assert wrapped.retryable is False
    # Not chained: a traceback formatter cannot print the foreign text from the cause.
    assert wrapped.__cause__ is None


def test_tool_raised_fits_a_tool_error_without_the_secret() -> None:
    wrapped = ToolRaised.from_exception(_VendorError(f"leaked {FAKE_SECRET}"))
    as_json = ToolError(type=wrapped.type, phase=wrapped.phase, message=wrapped.message)
    assert FAKE_SECRET not in as_json.model_dump_json()


def test_tool_raised_from_an_exception_with_a_secret_in_its_type_args() -> None:
    exc = _VendorError("first", {"api_key": FAKE_SECRET})
    assert FAKE_SECRET not in ToolRaised.from_exception(exc).message
