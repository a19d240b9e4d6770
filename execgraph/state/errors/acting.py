"""Failures of the phases that touch the world or the record: execute, verify, commit.

Here the status is what tells the model whether an effect may have happened: a
``ResponseLostError`` is UNKNOWN (reconcile before anything else), a ``TransientError``
committed nothing and may pass on a retry, a ``StoreError`` is the record's, not the
tool's. Only :class:`ModelRetry` carries a tool's own words.
"""

from __future__ import annotations

from execgraph.state.errors.base import ExecGraphError, ObservationStatus, Phase
from execgraph.state.errors.tool_bugs import WITHHELD_PREFIX

__all__ = [
    "MODEL_RETRY_CHARS",
    "AdapterError",
    "CallInProgress",
    "FencedOut",
    "LockTimeout",
    "ModelRetry",
    "PathEscapeError",
    "PermanentError",
    "ResponseLostError",
    "RunInProgress",
    "StoreError",
    "TargetNotFound",
    "ToolCancelled",
    "ToolRaised",
    "TransientError",
    "VerificationError",
    "WaitExpired",
]


class AdapterError(ExecGraphError):
    """The adapter could not do what was asked."""

    phase = Phase.EXECUTE


class PathEscapeError(AdapterError):
    """A path leaves the workspace or the data scope."""

    status = ObservationStatus.DENIED


class TargetNotFound(AdapterError):
    """The object the tool acts on does not exist."""

    status = ObservationStatus.NOT_FOUND


class TransientError(AdapterError):
    """A failure a later retry may not meet (rate limit, busy); nothing was committed."""

    retryable = True
    status = ObservationStatus.RETRYABLE_ERROR

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PermanentError(AdapterError):
    """A failure a retry will meet again."""


class ResponseLostError(AdapterError):
    """The effect may have happened but no response proves it: the outcome is unknown."""

    status = ObservationStatus.UNKNOWN


class ToolCancelled(AdapterError):
    """The call was cancelled before it finished."""

    status = ObservationStatus.CANCELLED


class WaitExpired(AdapterError):
    """A tool paused on its own question (``interrupt()``) and the wait expired unanswered:
    it was never resumed, so it did not complete."""


class ToolRaised(AdapterError):
    """A tool raised an exception execgraph cannot name; its text is withheld from the model
    (the developer gets it: the call's ``tool.raised`` event and the ``execgraph`` logger)."""

    @classmethod
    def from_exception(cls, exc: BaseException) -> ToolRaised:
        """Wrap a foreign exception, keeping only its type name (never its text)."""
        return cls(f"{WITHHELD_PREFIX}{type(exc).__name__}; details withheld")


MODEL_RETRY_CHARS = 500
"""The most of a tool's own message (:class:`ModelRetry`, ``ToolException``) a model sees."""


class ModelRetry(AdapterError):
    """Raise this from a tool to tell the model what to change; its message reaches the model.

    Any other exception a tool raises reaches the model as a fixed, typed message, since its
    text may hold a secret. This one is written for the model, like pydantic-ai's
    ``ModelRetry``; LangChain's ``ToolException`` is treated the same way. The message is cut
    to :data:`MODEL_RETRY_CHARS` and shown inside the tool output, as untrusted data. Raise
    it before the tool acts: like every typed error, it says nothing was committed::

        if page_size > 100:
            raise ModelRetry("page_size must be at most 100")
    """

    retryable = True
    status = ObservationStatus.RETRYABLE_ERROR

    def __init__(self, message: str) -> None:
        text = str(message)
        if len(text) > MODEL_RETRY_CHARS:
            text = text[: MODEL_RETRY_CHARS - 1] + "…"
        super().__init__(text)

    @classmethod
    def from_tool_exception(cls, exc: BaseException) -> ModelRetry:
        """A LangChain ``ToolException``: its first argument is its message for the model,
        as LangChain's own ``handle_tool_error`` would show it."""
        return cls(str(exc.args[0]) if exc.args else "the tool reported an error")


class VerificationError(ExecGraphError):
    """Read-after-write verification does not hold."""

    phase = Phase.VERIFY


class StoreError(ExecGraphError):
    """The execution store could not record or read."""

    phase = Phase.COMMIT
    retryable = True
    status = ObservationStatus.RETRYABLE_ERROR


class LockTimeout(StoreError):
    """A resource lock was not granted before the deadline."""


class CallInProgress(StoreError):
    """Another live worker holds this call's execution record (its lease has not expired)."""


class FencedOut(StoreError):
    """Another worker took this call over (its lease had expired): this result is not kept."""


class RunInProgress(StoreError):
    """Another live worker holds this run's lease: it is running the thread right now."""
