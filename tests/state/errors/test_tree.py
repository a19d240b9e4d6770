"""The shape of the error tree: every class is phased, has a status, fits a ToolError, and
inherits its family's phase; nothing-happened families are never ``unknown``."""

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
    TransientError,
)
from tests.state.errors.helpers import ERROR_CLASSES


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
        (errors.UsageError, Phase.VALIDATE),
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


def test_errors_can_be_caught_by_family() -> None:
    with pytest.raises(AdapterError):
        raise TransientError("x")
    with pytest.raises(ExecGraphError):
        raise errors.LockTimeout("x")
    with pytest.raises(PolicyError):
        raise errors.ApprovalTokenInvalid("x")
