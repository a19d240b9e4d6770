"""No raw exception text or stack trace ever reaches a ToolResult."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from execgraph.state.contracts import ToolResult
from execgraph.tools import AdapterOutput, InvokeContext, tool_spec
from tests.support.executor import config, make_deps, make_executor, request

SECRET = "sk-live-9f8e7d6c5b4a"


class VendorError(Exception):
    """Stands in for an SDK exception that embeds credentials in its text."""


@pytest.mark.parametrize(
    "exc",
    [
        VendorError(f"auth failed for key {SECRET}"),
        ValueError(f"bad header Authorization: Bearer {SECRET}"),
        RuntimeError(f"Traceback (most recent call last):\n  File secret.py {SECRET}"),
        KeyError(SECRET),
    ],
)
def test_foreign_exception_text_is_withheld(tmp_path: Path, exc: Exception) -> None:
    @tool_spec(effect="write")
    def leaky(x: int) -> str:
        """Raise an exception whose text holds a secret."""
        raise exc

    app = make_executor(make_deps(tmp_path, [leaky]))
    out = app.invoke({"request": request("leaky", {"x": 1}, root=tmp_path)}, config())
    result = ToolResult.model_validate(out["results"]["call-1"])
    dumped = result.model_dump_json()
    assert SECRET not in dumped and "Traceback" not in dumped
    assert result.error is not None and result.error.type == "ToolRaised"
    assert type(exc).__name__ in result.error.message


def test_secret_in_verify_and_probe_failures_is_withheld(tmp_path: Path) -> None:
    def bad_verify(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Any]:
        raise VendorError(f"verify crashed with {SECRET}")

    @tool_spec(effect="write", verify=bad_verify)
    def write_x(x: int) -> str:
        """A write whose read-back blows up."""
        return "ok"

    deps = make_deps(tmp_path, [write_x])
    out = make_executor(deps).invoke(
        {"request": request("write_x", {"x": 1}, root=tmp_path)}, config()
    )
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.error is not None and result.error.phase == "verify"
    assert SECRET not in result.model_dump_json()
    assert all(SECRET not in e.model_dump_json() for e in deps.store.events("run-1"))
