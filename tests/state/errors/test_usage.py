"""The UsageError branch: misuse of the library (a declaration, a setting, a command line)
is a typed ValueError, raised where the misuse is made, in every layer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from execgraph.state import errors
from execgraph.state.errors import ExecGraphError, ObservationStatus, Phase, UsageError
from tests.state.errors.helpers import ERROR_CLASSES

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
    tool_families = (
        errors.ResolutionError,
        errors.ArgumentError,
        errors.PolicyError,
        errors.AdapterError,
        errors.StoreError,
    )
    assert not any(issubclass(c, tool_families) for c in USAGE_CLASSES)
    assert issubclass(errors.ToolTypeError, errors.ToolDeclarationError)


def test_cli_error_keeps_its_exit_code() -> None:
    assert errors.CliError("bad run id").code == 2
    err = errors.CliError("run is busy", code=3)
    assert (err.code, err.message) == (3, "run is busy")


def test_usage_errors_are_importable_where_they_were() -> None:
    from execgraph.cli.options import CliError
    from execgraph.nodes.model import ModelConfigError
    from execgraph.nodes.model.select import ModelConfigError as FromSelect

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
    from execgraph.graph import build_graph
    from execgraph.nodes.model import resolve_model
    from execgraph.state.home import check_run_id
    from execgraph.state.store import open_store
    from execgraph.testing import ScriptedChatModel
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
        "run id": (lambda: check_run_id("../etc"), errors.UsageError),
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
