"""Helpers of the security battery: run one request through the executor, assert a refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.state.contracts import ToolResult
from tests.support.executor import config, make_deps, make_executor, request


def _result(out: dict[str, Any], call_id: str = "call-1") -> ToolResult:
    return ToolResult.model_validate(out["results"][call_id])


def _run(tmp_path: Path, tools: list[Any], tool: str, args: dict[str, Any]) -> ToolResult:
    app = make_executor(make_deps(tmp_path, tools))
    return _result(app.invoke({"request": request(tool, args, root=tmp_path)}, config()))


def _refused(result: ToolResult, error_type: str, status: str = "DENIED") -> None:
    assert result.outcome == "failed", result
    assert result.error is not None and result.error.type == error_type, result.error
    assert result.status == status
    assert result.side_effect.committed is False
    assert "Traceback" not in result.error.message
