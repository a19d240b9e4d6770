"""Stage 2 — normalize: aliases, path canonicalization and defaults, hashed before and after.

Approval binds to the *normalized* arguments, so two spellings of one action (``./a.txt``
and ``a.txt``, an alias, an omitted default) are one action to a person and to the record.
"""

from __future__ import annotations

import hashlib
from typing import Any

from execgraph.nodes.executor.call import Normalized
from execgraph.nodes.executor.hashing import canonical_json, stable_hash
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import SchemaViolation
from execgraph.state.secret_args import call_key, restore
from execgraph.state.surrogates import has_surrogate
from execgraph.tools.paths import normalize_relpath
from execgraph.tools.spec import ToolSpec

__all__ = ["canonical_arguments", "normalize"]


def normalize(request: ToolExecutionRequest, spec: ToolSpec) -> Normalized:
    """Normalize ``request.arguments`` for ``spec``.

    The canonical JSON is encoded once: its sha256 is ``args_hash`` and its length the
    ``size`` validate bounds.

    Raises:
        SchemaViolation: arguments are not an object, hold a lone surrogate, or an alias
            collides with its target.
        PathEscapeError: a path argument leaves the workspace.
    """
    raw = restore(  # a secret argument's value, kept in memory only (state.secret_args)
        request.arguments,
        spec.secrets,
        run_id=request.run_id,
        call_id=call_key(request.tool_call_id, request.step_id),
        tool=spec.name,
    )
    args, paths = canonical_arguments(raw, spec)
    encoded = canonical_json(args).encode("utf-8", "surrogatepass")  # (refused above)
    return Normalized(
        arguments=args,
        hash_before=stable_hash(raw),
        args_hash=hashlib.sha256(encoded).hexdigest(),
        paths=paths,
        size=len(encoded),
    )


def canonical_arguments(raw: Any, spec: ToolSpec) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The normalized arguments and the canonical paths among them, without hashing.

    Raises:
        SchemaViolation: arguments are not an object, hold a lone surrogate, or an alias
            collides with its target.
        PathEscapeError: a path argument leaves the workspace.
    """
    if not isinstance(raw, dict):
        raise SchemaViolation("arguments must be a JSON object")
    if has_surrogate(raw):  # no store, log or file system could take it (nor echo it)
        raise SchemaViolation("the arguments hold a lone surrogate (text that is not Unicode)")
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
