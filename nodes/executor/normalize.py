"""Stage 2 — normalize: aliases, path canonicalization and defaults, hashed before and after.

Approval binds to the *normalized* arguments, so two spellings of one action (``./a.txt``
and ``a.txt``, an alias, an omitted default) are one action to a person and to the record.
"""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.stages import Normalized
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import SchemaViolation
from execgraph.tools.paths import normalize_relpath
from execgraph.tools.spec import ToolSpec

__all__ = ["canonical_arguments", "normalize"]


def normalize(request: ToolExecutionRequest, spec: ToolSpec) -> Normalized:
    """Normalize ``request.arguments`` for ``spec``.

    Raises:
        SchemaViolation: arguments are not an object, or an alias collides with its target.
        PathEscapeError: a path argument leaves the workspace.
    """
    raw = request.arguments
    args, paths = canonical_arguments(raw, spec)
    return Normalized(
        arguments=args, hash_before=stable_hash(raw), args_hash=stable_hash(args), paths=paths
    )


def canonical_arguments(raw: Any, spec: ToolSpec) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The normalized arguments and the canonical paths among them, without hashing.

    Raises:
        SchemaViolation: arguments are not an object, or an alias collides with its target.
        PathEscapeError: a path argument leaves the workspace.
    """
    if not isinstance(raw, dict):
        raise SchemaViolation("arguments must be a JSON object")
    args: dict[str, Any] = {}
    for key, value in raw.items():
        canonical = spec.aliases.get(key, key)
        if canonical in args:
            raise SchemaViolation(f"argument {canonical!r} given twice (alias {key!r})")
        args[canonical] = value
    paths = []
    for name in spec.path_args:
        if isinstance(args.get(name), str):
            args[name] = normalize_relpath(args[name])
            paths.append(args[name])
    for name, field in spec.input_model.model_fields.items():
        if name not in args and not field.is_required():
            default = field.get_default(call_default_factory=True)
            if default is None or isinstance(default, str | int | float | bool | list | dict):
                args[name] = default
    return args, tuple(paths)
