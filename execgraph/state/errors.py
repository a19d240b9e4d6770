"""One error tree for execgraph.

Every failure the runtime can name is a subclass of :class:`ExecGraphError`. Each carries
the pipeline ``phase`` it belongs to, whether a retry may help, and the observation status
the model will see. Messages are written by execgraph itself, never copied from a foreign
exception, so no secret or stack trace can reach a model or a user through them (a foreign
exception's text goes to the developer instead: the event log and the ``execgraph`` logger).
Only :class:`ModelRetry` carries a tool's own words: a message written *for* the model::

    ExecGraphError
    ├── AdmissionError            task cannot become a contract (no model call spent)
    ├── ModelOutputError          model output cannot be parsed into decisions
    ├── ResolutionError           phase=resolve: nothing happened
    │   ├── UnknownToolError
    │   ├── ToolDisabledError
    │   └── IncompatibleVersionError
    ├── ArgumentError             phase=validate: nothing happened
    │   ├── SchemaViolation       also a ValueError, so pydantic validators may raise it
    │   ├── DomainViolation
    │   ├── StateGuardMismatch    expected_state (compare-and-swap) does not hold
    │   ├── DeadlineExceeded
    │   └── ArgumentsTooLarge     more normalized JSON than the run's bound allows
    ├── PolicyError               phase=policy: nothing happened
    │   ├── PolicyDenied
    │   ├── ApprovalRejected
    │   ├── ApprovalStale         approved request no longer matches the world
    │   ├── ApprovalTokenInvalid  forged, expired or already used token
    │   └── UnresolvedOutcome     an identical earlier write is still unknown
    ├── AdapterError              phase=execute
    │   ├── PathEscapeError       outside the workspace / data scope
    │   ├── TargetNotFound
    │   ├── TransientError        retryable (rate limit, busy)
    │   ├── PermanentError
    │   ├── ResponseLostError     effect may have happened: outcome unknown
    │   ├── ToolCancelled
    │   ├── ToolRaised            a tool raised something unnamed (text withheld)
    │   └── ModelRetry            a tool's message for the model: what to change (bounded)
    ├── VerificationError         phase=verify: read-after-write does not hold
    ├── StoreError                phase=commit
    │   ├── LockTimeout
    │   ├── CallInProgress        another live worker runs this call
    │   ├── FencedOut             this worker's lease was taken over: its result is not kept
    │   └── RunInProgress         another live worker holds this run's lease
    └── UsageError                the caller used execgraph wrongly; nothing ran (a ValueError)
        ├── ToolDeclarationError  a bad tool_spec / ToolSpec / adapter declaration
        │   └── ToolTypeError     an object of the wrong kind declared as a tool (a TypeError)
        ├── PolicyRuleError       a policy rule that cannot be parsed
        ├── ModelConfigError      the model argument cannot become a chat model
        ├── ScriptedReplyError    a scripted reply that is no AI message (a TypeError)
        ├── StoreConfigError      an execution-store URL that names no usable store
        └── CliError              a bad command line, task file or run id (exit code 2)

The tool-failure branches describe what a *model* is told about one call. ``UsageError``
is for the *developer*: raised while tools, policies, models, stores or graphs are
declared, before any call runs. Each of its classes is also a ``ValueError`` (or a
``TypeError``, where it replaces one), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

__all__ = [
    "MODEL_RETRY_CHARS",
    "AdapterError",
    "AdmissionError",
    "ApprovalConflict",
    "ApprovalRejected",
    "ApprovalStale",
    "ApprovalTokenInvalid",
    "ArgumentError",
    "ArgumentsTooLarge",
    "CallInProgress",
    "CliError",
    "DeadlineExceeded",
    "DomainViolation",
    "ExecGraphError",
    "FencedOut",
    "IncompatibleVersionError",
    "LockTimeout",
    "ModelConfigError",
    "ModelOutputError",
    "ModelRetry",
    "ObservationStatus",
    "PathEscapeError",
    "PermanentError",
    "Phase",
    "PolicyDenied",
    "PolicyError",
    "PolicyRuleError",
    "ResolutionError",
    "ResponseLostError",
    "RunInProgress",
    "SchemaViolation",
    "ScriptedReplyError",
    "StateGuardMismatch",
    "StoreConfigError",
    "StoreError",
    "TargetNotFound",
    "ToolCancelled",
    "ToolDeclarationError",
    "ToolDisabledError",
    "ToolRaised",
    "ToolTypeError",
    "TransientError",
    "UnknownToolError",
    "UnresolvedOutcome",
    "UsageError",
    "VerificationError",
]


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


class AdmissionError(ExecGraphError):
    """The task cannot be admitted into a contract; no model call was spent."""

    phase = Phase.VALIDATE


class ModelOutputError(ExecGraphError):
    """The model's output could not be parsed into decisions (after bounded repair)."""

    phase = Phase.VALIDATE


class ResolutionError(ExecGraphError):
    """The registry cannot give the exact tool asked for; nothing happened."""

    phase = Phase.RESOLVE


class UnknownToolError(ResolutionError):
    """No tool of that name is registered."""

    status = ObservationStatus.NOT_FOUND


class ToolDisabledError(ResolutionError):
    """The tool exists but is disabled."""

    status = ObservationStatus.DENIED


class IncompatibleVersionError(ResolutionError):
    """The requested version is not registered and no compatible one is."""


class ArgumentError(ExecGraphError):
    """The arguments do not hold; nothing happened."""

    phase = Phase.VALIDATE


class SchemaViolation(ArgumentError, ValueError):
    """Arguments do not match the tool's input schema.

    Also a ``ValueError``: raised inside a pydantic validator of a tool's input model, it
    becomes one of that model's validation errors (with its field location), which the
    validate stage reports as a SchemaViolation like any other.
    """


class DomainViolation(ArgumentError):
    """Arguments are well formed but outside the tool's domain."""


class StateGuardMismatch(ArgumentError):
    """An expected_state (compare-and-swap) condition does not hold."""

    retryable = True
    status = ObservationStatus.RETRYABLE_ERROR


class DeadlineExceeded(ArgumentError):
    """The request's deadline passed before the effect started."""


class ArgumentsTooLarge(ArgumentError):
    """The arguments' normalized JSON exceeds the run's bound; nothing stored them."""


class PolicyError(ExecGraphError):
    """Authorization refused; nothing happened."""

    phase = Phase.POLICY
    status = ObservationStatus.DENIED


class PolicyDenied(PolicyError):
    """A policy rule denies this call."""


class ApprovalRejected(PolicyError):
    """A person rejected the call."""


class ApprovalStale(PolicyError):
    """What was approved no longer matches the tool version, arguments or state."""


class ApprovalTokenInvalid(PolicyError):
    """An approval token is forged, expired, bound to other arguments, or already used."""


class UnresolvedOutcome(PolicyError):
    """An identical earlier write has an unknown outcome: reconcile it, never retry blindly."""


class ApprovalConflict(PolicyError):
    """Another answer to the same approval request was recorded first; this one lost."""


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


class ToolRaised(AdapterError):
    """A tool raised an exception execgraph cannot name; its text is withheld from the model
    (the developer gets it: the call's ``tool.raised`` event and the ``execgraph`` logger)."""

    @classmethod
    def from_exception(cls, exc: BaseException) -> ToolRaised:
        """Wrap a foreign exception, keeping only its type name (never its text)."""
        return cls(f"the tool failed with {type(exc).__name__}; details withheld")


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


class UsageError(ExecGraphError, ValueError):
    """The caller used execgraph wrongly: a bad declaration, configuration or argument.

    Raised at build or declaration time, before anything ran, and meant for the developer
    (its message says what to fix). It is no tool outcome; should one surface through a
    call after all, it reads as what it is: a validation failure a retry meets again.
    """

    phase = Phase.VALIDATE


class ToolDeclarationError(UsageError):
    """A tool cannot be declared as given: ``tool_spec``/``ToolSpec`` fields, an adapter's
    arguments (URLs, allow-lists, programs) or its declared statements."""


class ToolTypeError(ToolDeclarationError, TypeError):
    """An object of the wrong kind was declared as a tool (a ``*args`` function, an object
    that is no ToolSpec, LangChain tool or adapter)."""


class PolicyRuleError(UsageError):
    """A policy rule cannot be parsed (unknown decision or keys)."""


class ModelConfigError(UsageError):
    """The model argument cannot become a chat model; the message says how to fix it."""


class ScriptedReplyError(UsageError, TypeError):
    """A scripted model's reply is not an AI message (a test's script is wrong)."""


class StoreConfigError(UsageError):
    """An execution-store URL names no store execgraph can open durably."""


class CliError(UsageError):
    """A user-facing problem of the command line (bad input, unknown run): one line.

    ``code`` is the process exit code (2 unless said otherwise).
    """

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
