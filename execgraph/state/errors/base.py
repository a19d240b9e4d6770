"""The root of the error tree and the two things every error says about itself.

Each error names the pipeline ``phase`` it belongs to, whether a retry may help, and the
observation status the model will see; the families below set them once for all their
members, so a new error placed in the right family says the right thing.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

__all__ = ["ExecGraphError", "ObservationStatus", "Phase"]


class Phase(StrEnum):
    """Pipeline phase an error belongs to (ToolResult.error.phase)."""

    RESOLVE = "resolve"
    VALIDATE = "validate"
    POLICY = "policy"
    EXECUTE = "execute"
    VERIFY = "verify"
    COMMIT = "commit"


class ObservationStatus(StrEnum):
    """What the model is told about a call, independent of how the world was touched."""

    OK = "OK"
    NOT_FOUND = "NOT_FOUND"
    DENIED = "DENIED"
    RETRYABLE_ERROR = "RETRYABLE_ERROR"
    PERMANENT_ERROR = "PERMANENT_ERROR"
    PARTIAL = "PARTIAL"
    UNKNOWN = "UNKNOWN"
    CANCELLED = "CANCELLED"


class ExecGraphError(Exception):
    """Base of every execgraph error; its message is safe to show a model or a user."""

    phase: ClassVar[Phase] = Phase.EXECUTE
    retryable: ClassVar[bool] = False
    status: ClassVar[ObservationStatus] = ObservationStatus.PERMANENT_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def type(self) -> str:
        """Stable machine-readable error type (the class name)."""
        return type(self).__name__
