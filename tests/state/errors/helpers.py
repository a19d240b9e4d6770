"""The error tree as the tests walk it: every class :mod:`execgraph.state.errors` exports."""

from __future__ import annotations

from execgraph.state import errors
from execgraph.state.errors import ExecGraphError

__all__ = ["ERROR_CLASSES"]

ERROR_CLASSES: list[type[ExecGraphError]] = [
    obj
    for name in errors.__all__
    if isinstance(obj := getattr(errors, name), type) and issubclass(obj, ExecGraphError)
]
