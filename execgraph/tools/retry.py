"""Retries with operation semantics: only what is safe to redo is redone.

A retry is not "try again until it works". It is decided by what the operation is: a read
may be redone; a write only when the tool declares it idempotent (it hands the call's
``ctx.idempotency_key`` to the far side, so a second attempt cannot act twice). Only a
failure that says a retry may help (``RETRYABLE_ERROR``: a transient error, a rate limit, a
read that timed out) is retried, after a backoff that honours the tool's ``retry_after_s``.
An ``unknown`` outcome is never retried: it is reconciled first. Every attempt is logged
and charged to the run's tool-call budget, and no retry outlives the call's deadline or
the budget left when the call was queued.
"""

from __future__ import annotations

from dataclasses import dataclass

from execgraph.state.errors import ToolDeclarationError

__all__ = ["DEFAULT_READ_RETRY", "RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a tool's retryable failures are tried again.

    Attributes:
        max_attempts: Attempts in all, the first included (1: never retried).
        backoff_s: The wait before the second attempt.
        multiplier: Each further wait is this many times the one before.
        max_backoff_s: No wait is longer, and a ``retry_after_s`` above it is not waited for
            (the call fails as it is instead).
    """

    max_attempts: int = 3
    backoff_s: float = 0.2
    multiplier: float = 2.0
    max_backoff_s: float = 5.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.backoff_s < 0 or self.multiplier < 1:
            raise ToolDeclarationError(
                "a retry policy needs max_attempts >= 1, backoff_s >= 0 and multiplier >= 1"
            )

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float | None:
        """The wait before attempt ``attempt + 1``, or None when there is to be none."""
        if attempt >= self.max_attempts:
            return None
        wait = min(self.backoff_s * self.multiplier ** (attempt - 1), self.max_backoff_s)
        if retry_after_s is not None:
            if retry_after_s > self.max_backoff_s:
                return None
            wait = max(wait, retry_after_s)
        return wait


DEFAULT_READ_RETRY = RetryPolicy()
"""What a read (or an idempotent write) gets unless it declares otherwise: three attempts,
0.2 s then 0.4 s apart."""
