"""The error tree of :mod:`execgraph.state.errors`: typed, phased, never leaking foreign text."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from execgraph.state import errors
from execgraph.state.contracts import ToolError
from execgraph.state.errors import (
    AdapterError,
    ArgumentError,
    ExecGraphError,
    ObservationStatus,
    Phase,
    PolicyError,
    ResolutionError,
    StoreError,
    ToolRaised,
    TransientError,
    UsageError,
)

FAKE_SECRET = "sk-live-4f9c2e7d1b8a6f3e"

ERROR_CLASSES: list[type[ExecGraphError]] = [
    obj
    for name in errors.__all__
    if isinstance(obj := getattr(errors, name), type) and issubclass(obj, ExecGraphError)
]


def _make(cls: type[ExecGraphError], message: str = "safe message") -> ExecGraphError:
    return cls(message)


def test_all_lists_the_whole_tree() -> None:
    assert ExecGraphError in ERROR_CLASSES
    assert len(ERROR_CLASSES) >= 28
    defined = {
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, ExecGraphError)
    }
    assert defined == set(ERROR_CLASSES)


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_has_a_phase_and_a_status(cls: type[ExecGraphError]) -> None:
    assert isinstance(cls.phase, Phase)
    assert isinstance(cls.status, ObservationStatus)
    assert isinstance(cls.retryable, bool)
    err = _make(cls)
    assert err.phase is cls.phase
    assert err.status is cls.status
    assert err.type == cls.__name__
    assert err.message == "safe message"
    assert str(err) == "safe message"
    assert isinstance(err, Exception)


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_fits_a_tool_error(cls: type[ExecGraphError]) -> None:
    err = _make(cls)
    tool_error = ToolError(
        type=err.type, phase=err.phase, retryable=err.retryable, message=err.message
    )
    assert ToolError.model_validate_json(tool_error.model_dump_json()) == tool_error


@pytest.mark.parametrize(
    ("family", "phase"),
    [
        (ResolutionError, Phase.RESOLVE),
        (ArgumentError, Phase.VALIDATE),
        (PolicyError, Phase.POLICY),
        (AdapterError, Phase.EXECUTE),
        (errors.VerificationError, Phase.VERIFY),
        (StoreError, Phase.COMMIT),
        (errors.UsageError, Phase.VALIDATE),
    ],
)
def test_subclasses_inherit_their_family_phase(family: type[ExecGraphError], phase: Phase) -> None:
    members = [c for c in ERROR_CLASSES if issubclass(c, family)]
    assert members
    assert all(c.phase is phase for c in members)


def test_nothing_happened_families_are_not_unknown() -> None:
    # Resolution, validation and policy refusals happen before any side effect.
    for cls in ERROR_CLASSES:
        if issubclass(cls, ResolutionError | ArgumentError | PolicyError):
            assert cls.status is not ObservationStatus.UNKNOWN


@pytest.mark.parametrize(
    ("cls", "status", "retryable"),
    [
        (errors.UnknownToolError, ObservationStatus.NOT_FOUND, False),
        (errors.ToolDisabledError, ObservationStatus.DENIED, False),
        (errors.StateGuardMismatch, ObservationStatus.RETRYABLE_ERROR, True),
        (errors.PolicyDenied, ObservationStatus.DENIED, False),
        (errors.ApprovalRejected, ObservationStatus.DENIED, False),
        (errors.PathEscapeError, ObservationStatus.DENIED, False),
        (errors.TargetNotFound, ObservationStatus.NOT_FOUND, False),
        (TransientError, ObservationStatus.RETRYABLE_ERROR, True),
        (errors.PermanentError, ObservationStatus.PERMANENT_ERROR, False),
        (errors.ResponseLostError, ObservationStatus.UNKNOWN, False),
        (errors.ToolCancelled, ObservationStatus.CANCELLED, False),
        (errors.LockTimeout, ObservationStatus.RETRYABLE_ERROR, True),
    ],
)
def test_observation_status_and_retryability(
    cls: type[ExecGraphError], status: ObservationStatus, retryable: bool
) -> None:
    assert cls.status is status
    assert cls.retryable is retryable


def test_response_lost_is_never_blindly_retryable() -> None:
    # An unknown outcome must be reconciled first, never retried as if nothing happened.
    assert errors.ResponseLostError.retryable is False


# --------------------------------------------------------------------------- ToolRaised


class _VendorError(RuntimeError):
    pass


def _raise_and_wrap(exc: BaseException) -> ToolRaised:
    try:
        raise exc
    except BaseException as caught:
        return ToolRaised.from_exception(caught)


@pytest.mark.parametrize(
    "foreign",
    [
        _VendorError(f"auth failed for token {FAKE_SECRET}"),
        ValueError(f"password={FAKE_SECRET}"),
        KeyError(FAKE_SECRET),
        OSError(13, f"permission denied: /home/u/.ssh/{FAKE_SECRET}"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_tool_raised_keeps_the_type_name_but_not_the_text(foreign: BaseException) -> None:
    wrapped = _raise_and_wrap(foreign)
    assert isinstance(wrapped, ToolRaised)
    assert isinstance(wrapped, AdapterError)
    assert type(foreign).__name__ in wrapped.message
    for text in (wrapped.message, str(wrapped), repr(wrapped), *map(str, wrapped.args)):
        assert FAKE_SECRET not in text
    assert wrapped.type == "ToolRaised"
    assert wrapped.phase is Phase.EXECUTE
    assert wrapped.status is ObservationStatus.PERMANENT_ERROR
    assert wrapped.retryable is False
    # Not chained: a traceback formatter cannot print the foreign text from the cause.
    assert wrapped.__cause__ is None


def test_tool_raised_fits_a_tool_error_without_the_secret() -> None:
    wrapped = ToolRaised.from_exception(_VendorError(f"leaked {FAKE_SECRET}"))
    as_json = ToolError(type=wrapped.type, phase=wrapped.phase, message=wrapped.message)
    assert FAKE_SECRET not in as_json.model_dump_json()


def test_tool_raised_from_an_exception_with_a_secret_in_its_type_args() -> None:
    exc = _VendorError("first", {"api_key": FAKE_SECRET})
    assert FAKE_SECRET not in ToolRaised.from_exception(exc).message


# --------------------------------------------------------------------------- ModelRetry


def test_model_retry_is_a_tools_bounded_message_for_the_model() -> None:
    err = errors.ModelRetry("use an ISO date such as 2024-05-01")
    assert err.message == "use an ISO date such as 2024-05-01"  # the tool's own words
    assert isinstance(err, AdapterError) and err.phase is Phase.EXECUTE
    assert err.status is ObservationStatus.RETRYABLE_ERROR and err.retryable is True
    long = errors.ModelRetry("z" * 10_000)
    assert len(long.message) == errors.MODEL_RETRY_CHARS and long.message.endswith("…")
    assert "ModelRetry" in (errors.__doc__ or "")


def test_model_retry_from_a_tool_exception_keeps_its_first_argument() -> None:
    from langchain_core.tools import ToolException

    err = errors.ModelRetry.from_tool_exception(ToolException("query too broad", 42))
    assert err.message == "query too broad"
    assert errors.ModelRetry.from_tool_exception(ToolException()).message != ""


# --------------------------------------------------------------------------- TransientError


def test_transient_error_keeps_retry_after() -> None:
    err = TransientError("rate limited", retry_after_s=2.5)
    assert err.retry_after_s == 2.5
    assert err.retryable is True
    assert err.message == "rate limited"
    assert err.phase is Phase.EXECUTE


def test_transient_error_retry_after_defaults_to_none() -> None:
    assert TransientError("busy").retry_after_s is None


def test_transient_error_retry_after_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        TransientError("busy", 2.5)  # type: ignore[call-arg]


def test_transient_error_retry_after_fits_a_tool_error() -> None:
    err = TransientError("rate limited", retry_after_s=1.0)
    tool_error = ToolError(
        type=err.type,
        phase=err.phase,
        retryable=err.retryable,
        message=err.message,
        retry_after_s=err.retry_after_s,
    )
    assert tool_error.retry_after_s == 1.0


def test_errors_can_be_caught_by_family() -> None:
    with pytest.raises(AdapterError):
        raise TransientError("x")
    with pytest.raises(ExecGraphError):
        raise errors.LockTimeout("x")
    with pytest.raises(PolicyError):
        raise errors.ApprovalTokenInvalid("x")


# --------------------------------------------------------------------------- UsageError

USAGE_CLASSES = [c for c in ERROR_CLASSES if issubclass(c, UsageError)]


def test_the_usage_branch_holds_every_misuse_error() -> None:
    names = {c.__name__ for c in USAGE_CLASSES}
    assert names == {
        "UsageError",
        "ToolDeclarationError",
        "ToolTypeError",
        "PolicyRuleError",
        "ModelConfigError",
        "ScriptedReplyError",
        "StoreConfigError",
        "CliError",
    }
    for name in names:
        assert name in (errors.__doc__ or ""), f"{name} is not drawn in the tree"


@pytest.mark.parametrize("cls", USAGE_CLASSES, ids=lambda c: c.__name__)
def test_usage_errors_are_value_errors_nothing_ran(cls: type[UsageError]) -> None:
    # ``except ValueError`` callers (and pytest.raises(ValueError)) keep working.
    err = cls("fix the declaration")
    assert isinstance(err, ValueError) and isinstance(err, ExecGraphError)
    assert err.phase is Phase.VALIDATE
    assert err.status is ObservationStatus.PERMANENT_ERROR
    assert err.retryable is False
    assert (str(err), err.message, err.type) == (
        "fix the declaration",
        "fix the declaration",
        cls.__name__,
    )


@pytest.mark.parametrize("cls", [errors.ToolTypeError, errors.ScriptedReplyError])
def test_usage_errors_that_replace_a_type_error_are_type_errors(cls: type[UsageError]) -> None:
    with pytest.raises(TypeError, match="wrong kind"):
        raise cls("wrong kind")


def test_usage_errors_are_no_tool_failure_family() -> None:
    tool_families = (ResolutionError, ArgumentError, PolicyError, AdapterError, StoreError)
    assert not any(issubclass(c, tool_families) for c in USAGE_CLASSES)
    assert issubclass(errors.ToolTypeError, errors.ToolDeclarationError)


def test_cli_error_keeps_its_exit_code() -> None:
    assert errors.CliError("bad run id").code == 2
    err = errors.CliError("run is busy", code=3)
    assert (err.code, err.message) == (3, "run is busy")


def test_usage_errors_are_importable_where_they_were() -> None:
    from execgraph.cli.runs import CliError
    from execgraph.nodes.models import ModelConfigError
    from execgraph.nodes.models.select import ModelConfigError as FromSelect

    assert CliError is errors.CliError
    assert ModelConfigError is FromSelect is errors.ModelConfigError


def _raises(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("no error raised")


def _misuses(tmp_path: Path) -> dict[str, tuple[Callable[[], Any], type[UsageError]]]:
    """One misuse per layer, and the UsageError it must raise."""
    from execgraph.cli.runs import check_run_id
    from execgraph.graph import build_graph
    from execgraph.nodes.models import ScriptedChatModel, resolve_model
    from execgraph.state.store import open_store
    from execgraph.tools import PolicyEngine, ToolRegistry, tool_spec
    from execgraph.tools.adapters import DatabaseAdapter, HttpAdapter

    return {
        "tool_spec effect": (
            lambda: tool_spec(lambda: None, effect="destroy"),  # type: ignore[arg-type]
            errors.ToolDeclarationError,
        ),
        "registry item": (lambda: ToolRegistry([42]), errors.ToolTypeError),  # type: ignore[list-item]
        "policy rule": (lambda: PolicyEngine([{"decision": "maybe"}]), errors.PolicyRuleError),
        "database url": (lambda: DatabaseAdapter("mysql://h/db"), errors.ToolDeclarationError),
        "http endpoint": (
            lambda: HttpAdapter(["a.test"], status_endpoints={"http://a.test/": "{x}"}),
            errors.ToolDeclarationError,
        ),
        "scripted reply": (lambda: ScriptedChatModel([42]), errors.ScriptedReplyError),  # type: ignore[list-item]
        "model string": (lambda: resolve_model("no-provider-here"), errors.ModelConfigError),
        "store url": (lambda: open_store("mysql://h/db"), errors.StoreConfigError),
        "architecture": (
            lambda: build_graph("nope", model="x:y", tools=[], home=tmp_path, checkpointer=False),
            UsageError,
        ),
        "run id": (lambda: check_run_id("../etc"), errors.CliError),
    }


@pytest.mark.parametrize(
    "case",
    [
        "tool_spec effect",
        "registry item",
        "policy rule",
        "database url",
        "http endpoint",
        "scripted reply",
        "model string",
        "store url",
        "architecture",
        "run id",
    ],
)
def test_misuse_raises_its_usage_error(case: str, tmp_path: Path) -> None:
    call, cls = _misuses(tmp_path)[case]
    err = _raises(call)
    assert type(err) is cls, f"{case}: {type(err).__name__}: {err}"
    assert err.message and "\n" not in err.message  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- SchemaViolation


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


# --------------------------------------------------------------------------- no builtin raises

ROOT = Path(__file__).resolve().parents[2]
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
    """Every Python file of the package: the four layer folders (the real ones, not the
    links under execgraph/), the CLI, the demo and the package's own modules."""
    folders = [root / name for name in ("graph", "nodes", "tools", "state")]
    folders += [root / "execgraph" / "cli", root / "execgraph" / "demo"]
    files = [p for folder in folders for p in sorted(folder.rglob("*.py"))]
    return files + sorted((root / "execgraph").glob("*.py"))


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
        "graph/build.py",
        "nodes/model_call.py",
        "nodes/executor/gate.py",
        "tools/spec.py",
        "tools/adapters/netguard.py",
        "state/store/__init__.py",
        "execgraph/cli/runs.py",
        "execgraph/demo/research.py",
        "execgraph/replay.py",
    ):
        assert expected in files
    assert not any(f.startswith(("execgraph/graph/", "execgraph/nodes/")) for f in files)


def test_no_builtin_value_or_type_error_is_raised_in_the_package() -> None:
    # Misuse is a UsageError, a model-facing failure a tool error: both in the one tree.
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in package_sources(ROOT)
        for line in builtin_raises(path.read_text())
    ]
    assert found == [], "raise a class of execgraph.state.errors instead: " + ", ".join(found)
