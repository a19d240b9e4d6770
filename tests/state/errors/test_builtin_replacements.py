"""No builtin ValueError/TypeError is raised in the package (an AST scan of every source
file), and the typed errors that replace them work where the builtins were expected."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from execgraph.state import errors
from execgraph.state.errors import ArgumentError


class _Args(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > 3:
            raise errors.SchemaViolation("name is too long")
        return value


def test_schema_violation_inside_a_validator_is_a_validation_error() -> None:
    # A tool's input model raises SchemaViolation; pydantic collects it with its location,
    # exactly as it did the builtin ValueError it replaces (same text for the model).
    with pytest.raises(ValidationError) as info:
        _Args(name="toolong")
    (error,) = info.value.errors()
    assert (error["loc"], error["msg"]) == (("name",), "Value error, name is too long")
    assert isinstance(errors.SchemaViolation("x"), ArgumentError)


ROOT = Path(__file__).resolve().parents[3]
_BUILTINS = frozenset({"ValueError", "TypeError"})


def builtin_raises(source: str) -> list[int]:
    """Lines of ``source`` that raise a builtin ValueError/TypeError (called or bare)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(exc, ast.Attribute) and isinstance(exc.value, ast.Name):
            named = exc.attr if exc.value.id == "builtins" else None
        else:
            named = exc.id if isinstance(exc, ast.Name) else None
        if named in _BUILTINS:
            lines.append(node.lineno)
    return sorted(lines)


def package_sources(root: Path) -> list[Path]:
    """Every Python file of the package: the one tree under ``execgraph/``."""
    return sorted((root / "execgraph").rglob("*.py"))


def test_the_scan_finds_builtin_raises() -> None:
    source = (
        "import builtins\n"
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError('bad')\n"
        "    raise TypeError\n"
        "def g():\n"
        "    raise builtins.ValueError('bad')\n"
        "def h(exc):\n"
        "    raise UsageError('fine') from exc\n"
        "def k():\n"
        "    raise\n"
    )
    assert builtin_raises(source) == [4, 5, 7]


def test_the_scan_covers_the_whole_package() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in package_sources(ROOT)}
    for expected in (
        "execgraph/graph/build.py",
        "execgraph/nodes/model/call.py",
        "execgraph/nodes/executor/pipeline.py",
        "execgraph/tools/spec.py",
        "execgraph/tools/adapters/netguard.py",
        "execgraph/state/store/__init__.py",
        "execgraph/engines/embedded/runs.py",
        "execgraph/demo/research.py",
        "execgraph/replaying.py",
    ):
        assert expected in files


def test_no_builtin_value_or_type_error_is_raised_in_the_package() -> None:
    # Misuse is a UsageError, a model-facing failure a tool error: both in the one tree.
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in package_sources(ROOT)
        for line in builtin_raises(path.read_text())
    ]
    assert found == [], "raise a class of execgraph.state.errors instead: " + ", ".join(found)
