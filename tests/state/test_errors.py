"""The error tree of :mod:`execgraph.state.errors`: typed, phased, never leaking foreign text."""

from __future__ import annotations

import pytest

from execgraph.state import errors
from execgraph.state.contracts import ToolError
from execgraph.state.errors import (
    AdapterError,
    ArgumentError,
    ExecGraphError,
    ObservationStatus,
    Phase,
    PolicyError,
    ResolutionError,
    StoreError,
    ToolRaised,
    TransientError,
)

FAKE_SECRET = "sk-live-4f9c2e7d1b8a6f3e"

ERROR_CLASSES: list[type[ExecGraphError]] = [
    obj
    for name in errors.__all__
    if isinstance(obj := getattr(errors, name), type) and issubclass(obj, ExecGraphError)
]


def _make(cls: type[ExecGraphError], message: str = "safe message") -> ExecGraphError:
    return cls(message)


def test_all_lists_the_whole_tree() -> None:
    assert ExecGraphError in ERROR_CLASSES
    assert len(ERROR_CLASSES) >= 28
    defined = {
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, ExecGraphError)
    }
    assert defined == set(ERROR_CLASSES)


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_has_a_phase_and_a_status(cls: type[ExecGraphError]) -> None:
    assert isinstance(cls.phase, Phase)
    assert isinstance(cls.status, ObservationStatus)
    assert isinstance(cls.retryable, bool)
    err = _make(cls)
    assert err.phase is cls.phase
    assert err.status is cls.status
    assert err.type == cls.__name__
    assert err.message == "safe message"
    assert str(err) == "safe message"
    assert isinstance(err, Exception)


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_fits_a_tool_error(cls: type[ExecGraphError]) -> None:
    err = _make(cls)
    tool_error = ToolError(
        type=err.type, phase=err.phase, retryable=err.retryable, message=err.message
    )
    assert ToolError.model_validate_json(tool_error.model_dump_json()) == tool_error


@pytest.mark.parametrize(
    ("family", "phase"),
    [
        (ResolutionError, Phase.RESOLVE),
        (ArgumentError, Phase.VALIDATE),
        (PolicyError, Phase.POLICY),
        (AdapterError, Phase.EXECUTE),
        (errors.VerificationError, Phase.VERIFY),
        (StoreError, Phase.COMMIT),
    ],
)
def test_subclasses_inherit_their_family_phase(family: type[ExecGraphError], phase: Phase) -> None:
    members = [c for c in ERROR_CLASSES if issubclass(c, family)]
    assert members
    assert all(c.phase is phase for c in members)


def test_nothing_happened_families_are_not_unknown() -> None:
    # Resolution, validation and policy refusals happen before any side effect.
    for cls in ERROR_CLASSES:
        if issubclass(cls, ResolutionError | ArgumentError | PolicyError):
            assert cls.status is not ObservationStatus.UNKNOWN


@pytest.mark.parametrize(
    ("cls", "status", "retryable"),
    [
        (errors.UnknownToolError, ObservationStatus.NOT_FOUND, False),
        (errors.ToolDisabledError, ObservationStatus.DENIED, False),
        (errors.StateGuardMismatch, ObservationStatus.RETRYABLE_ERROR, True),
        (errors.PolicyDenied, ObservationStatus.DENIED, False),
        (errors.ApprovalRejected, ObservationStatus.DENIED, False),
        (errors.PathEscapeError, ObservationStatus.DENIED, False),
        (errors.TargetNotFound, ObservationStatus.NOT_FOUND, False),
        (TransientError, ObservationStatus.RETRYABLE_ERROR, True),
        (errors.PermanentError, ObservationStatus.PERMANENT_ERROR, False),
        (errors.ResponseLostError, ObservationStatus.UNKNOWN, False),
        (errors.ToolCancelled, ObservationStatus.CANCELLED, False),
        (errors.LockTimeout, ObservationStatus.RETRYABLE_ERROR, True),
    ],
)
def test_observation_status_and_retryability(
    cls: type[ExecGraphError], status: ObservationStatus, retryable: bool
) -> None:
    assert cls.status is status
    assert cls.retryable is retryable


def test_response_lost_is_never_blindly_retryable() -> None:
    # An unknown outcome must be reconciled first, never retried as if nothing happened.
    assert errors.ResponseLostError.retryable is False


# --------------------------------------------------------------------------- ToolRaised


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


# --------------------------------------------------------------------------- TransientError


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


def test_errors_can_be_caught_by_family() -> None:
    with pytest.raises(AdapterError):
        raise TransientError("x")
    with pytest.raises(ExecGraphError):
        raise errors.LockTimeout("x")
    with pytest.raises(PolicyError):
        raise errors.ApprovalTokenInvalid("x")
