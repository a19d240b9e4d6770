"""Failures before anything acts: a task, a model's reply or one call refused.

Nothing happened when one of these is raised: the task never became a contract, the
reply was never acted on, or the call was refused while it was resolved, validated or
authorized. Whoever handles one may say that nothing was committed, whatever the
family: the resolve, validate and policy phases come before any effect.
"""

from __future__ import annotations

from execgraph.state.errors.base import ExecGraphError, ObservationStatus, Phase

__all__ = [
    "AdmissionError",
    "ApprovalConflict",
    "ApprovalRejected",
    "ApprovalStale",
    "ApprovalTokenInvalid",
    "ArgumentError",
    "ArgumentsTooLarge",
    "DeadlineExceeded",
    "DomainViolation",
    "IncompatibleVersionError",
    "ModelOutputError",
    "PolicyDenied",
    "PolicyError",
    "RefusalUpheld",
    "ResolutionError",
    "SchemaViolation",
    "StateGuardMismatch",
    "ToolDisabledError",
    "UnknownToolError",
    "UnresolvedOutcome",
]


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
    """A policy rule denies this call.

    ``sticks`` marks a no to the effect itself (a rule or default denied it), which later
    calls of the run are held to; a refusal that says what would be accepted (an argument
    rule's ``refuse``) or that the tool is not offered at this step does not stick.
    """

    def __init__(self, message: str, *, sticks: bool = False) -> None:
        super().__init__(message)
        self.sticks = sticks


class RefusalUpheld(PolicyDenied):
    """The call would do what an earlier refusal in the run stopped — by another tool or
    other arguments: same effect toward the same target, or the refused content (a
    refusal sticks, :mod:`execgraph.nodes.executor.refusals`)."""


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
