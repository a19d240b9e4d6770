"""``execgraph eval --model provider:model`` end to end, against a real OpenAI-compatible
server on 127.0.0.1 with scripted replies: the runs go through ``ChatOpenAI`` over HTTP,
and the report records the model, the version its replies named and the temperature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from execgraph.cli.commands import app
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

pytest.importorskip("langchain_openai")

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_eval_with_a_real_model_records_its_name_version_and_temperature(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_server.add(
        tool_calls(tool_call("read_file", {"path": "config.ini"})),
        tool_calls(tool_call("finish", {"output": "The server port is 8431."})),
    )
    out = tmp_path / "eval"
    args = [
        "eval", "--model", "openai:gpt-test-2026-01-01", "--temperature", "0.2",
        "--tasks", "read-config-value", "--arch", "react", "--ablation", "baseline",
        "--seeds", "1", "--no-faults", "--workers", "1", "--flaky", "0", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not openai_server.unexpected
    bodies = [r.body for r in openai_server.requests]
    assert len(bodies) == 2 and all(b.get("temperature") == 0.2 for b in bodies)
    assert all(b.get("model") == "gpt-test-2026-01-01" for b in bodies)
    data = json.loads((out / "eval.json").read_text())
    assert data["model"] == {
        "name": "openai:gpt-test-2026-01-01",
        "versions": ["gpt-test-2026-01-01"],
        "temperature": 0.2,
    }
    (cell,) = data["cells"]
    assert cell["error_type"] is None and cell["metrics"]["accepted"] is True
    assert cell["metrics"]["input_tokens"] > 0  # the server's reported usage, from the log
    assert data["config"]["noise"] is None and data["config"]["temperature"] == 0.2
    assert "temperature 0.2" in (out / "eval.md").read_text()


def test_a_temperature_without_a_model_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--temperature", "0.3", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "temperature applies to a --model" in result.output
