"""Stage 3 — validate: schema, domain, state guard (compare-and-swap), runtime.

A schema pass only says the input is well formed; the state guard says the world is still
what the caller saw (``expected_state``), and the runtime check says there is still time.
The gate reports whatever refuses a call here or in normalize at this stage (``phase``
``validate``, see :func:`refused_at_validate`), even an error whose kind usually belongs
to a tool (a path escape): the tool never ran.

A call that already has an execution record passed its guard before: its record decides
(a committed result is returned as is, one in doubt is reconciled), not the guard, which
a node re-run after a crash finds broken by this very call (:func:`validate_call`).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from execgraph.nodes.executor.argument_size import DEFAULT_MAX_ARGUMENT_BYTES, oversized
from execgraph.nodes.executor.call import Normalized, Validated
from execgraph.nodes.executor.stages.reserve import recorded
from execgraph.nodes.executor.targets import read_state
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import (
    DeadlineExceeded,
    DomainViolation,
    ExecGraphError,
    Phase,
    SchemaViolation,
    StateGuardMismatch,
)
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.paths import confine_path
from execgraph.tools.spec import ToolSpec

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "check_argument_size",
    "refused_at_validate",
    "schema_message",
    "validate",
    "validate_call",
]


def refused_at_validate(exc: ExecGraphError) -> ExecGraphError:
    """``exc`` reported at the validate stage that refused the call before it ran.

    A ``PathEscapeError`` is a tool's error by kind (``phase`` execute, where a tool that
    confines its own paths raises it); caught while normalize or validate confine the
    arguments, nothing ran, and the result must say which stage refused.
    """
    if exc.phase is not Phase.VALIDATE:
        exc.phase = Phase.VALIDATE  # type: ignore[misc]  # this instance's stage, not its kind's
    return exc


def schema_message(exc: ValidationError, limit: int = 5) -> str:
    """A safe summary of a pydantic error: field locations and kinds, never input values."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False, include_context=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def check_argument_size(request: ToolExecutionRequest, normalized: Normalized) -> None:
    """Refuse arguments whose normalized JSON exceeds the request's bound, before the
    schema is even tried (a model of megabytes is not worth validating) and before any
    record stores them.

    Raises:
        ArgumentsTooLarge: naming the size and the limit.
    """
    refusal = oversized(normalized.size, request.max_argument_bytes)
    if refusal is not None:
        raise refusal


def validate(
    request: ToolExecutionRequest,
    spec: ToolSpec,
    normalized: Normalized,
    *,
    now: float | None = None,
) -> Validated:
    """Check the normalized arguments against schema, workspace, expected state and deadline.

    Raises:
        ArgumentsTooLarge, SchemaViolation, PathEscapeError, DomainViolation,
        StateGuardMismatch, DeadlineExceeded.
    """
    check_argument_size(request, normalized)
    try:
        args = spec.input_model.model_validate(normalized.arguments)
    except ValidationError as exc:
        raise SchemaViolation(f"arguments do not match {spec.key}: {schema_message(exc)}") from None
    if normalized.paths or request.expected_state:
        _check_workspace(request, spec, normalized, args)
    current_time = time.time() if now is None else now
    if request.deadline is not None and current_time >= request.deadline:
        raise DeadlineExceeded("the request's deadline passed before the call could start")
    return Validated(args=args, normalized=normalized)


def _check_workspace(
    request: ToolExecutionRequest, spec: ToolSpec, normalized: Normalized, args: BaseModel
) -> None:
    """The paths confined to the real workspace, and the expected state still holding."""
    root = Path(request.workspace.root)
    for rel in normalized.paths:
        confine_path(root, rel)  # symlink escapes are only visible against the real tree
    for key, expected in sorted(request.expected_state.items()):
        if spec.read_state is None:
            raise DomainViolation(f"{spec.key} cannot check expected_state {key!r}")
        current = read_state(spec, key, args, root)
        if current != expected:
            raise StateGuardMismatch(
                f"expected_state {key!r} no longer holds (the target changed since it was read)"
            )


def validate_call(
    request: ToolExecutionRequest, spec: ToolSpec, normalized: Normalized, store: ExecutionStore
) -> Validated:
    """:func:`validate`, but a call with an execution record is not refused by its state
    guard (its record decides, see the module docstring).

    Raises:
        as :func:`validate`.
    """
    try:
        return validate(request, spec, normalized)
    except StateGuardMismatch:
        if not recorded(request, store):
            raise
    return validate(request.model_copy(update={"expected_state": {}}), spec, normalized)
