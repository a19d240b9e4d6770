"""``execgraph metrics`` and ``execgraph diagnose`` on a real run under a temporary home.

The run is the demo, driven by the CLI itself (``execgraph run --auto-approve``); both
commands then read its events back from the home's SQLite execution store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from execgraph.cli.commands import app
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore

runner = CliRunner()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("home")
    args = ["run", "--home", str(base), "--run-id", "r1", "--auto-approve", "--no-input"]
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    return base


def _json(*args: str) -> dict:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.timeout(180)
def test_metrics_json_counts_what_the_log_holds(home: Path) -> None:
    got = _json("metrics", "r1", "--home", str(home), "--json")
    with SqliteExecutionStore(home / "exec.db") as store:
        events = store.events("r1")
    called = [e for e in events if e.type is EventType.MODEL_CALLED]
    counts = got["counts"]
    assert counts["model_calls"] == len(called) > 0
    assert counts["input_tokens"] == sum(e.payload["tokens_in"] for e in called)
    assert counts["tool_calls"] == sum(1 for e in events if e.type is EventType.TOOL_STARTED)
    assert counts["unauthorized_executions"] == 0 and counts["accepted"] is True
    assert got["accepted_by"] == "verifier"
    assert counts["unpriced_model_calls"] == len(called)  # no price table: nothing priced
    assert got["metrics"]["legal_action_rate"] == 1.0
    assert got["metrics"]["recovery_rate"] is None  # no fault: nothing to divide


def test_metrics_prices_the_logged_usage_with_a_price_table(home: Path, tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    table.write_text(
        json.dumps({"offline-policy": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}})
    )
    counts = _json("metrics", "r1", "--home", str(home), "--json", "--prices", str(table))["counts"]
    expected = (counts["input_tokens"] * 1.0 + counts["output_tokens"] * 4.0) / 1e6
    assert counts["model_cost_usd"] == pytest.approx(expected) and expected > 0
    assert counts["unpriced_model_calls"] == 0


def test_metrics_table_says_where_acceptance_is_judged(home: Path) -> None:
    result = runner.invoke(app, ["metrics", "r1", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert "legal action rate" in result.output and "100.0%" in result.output
    assert "unauthorized executions" in result.output
    assert "only known under `execgraph eval`" in " ".join(result.output.split())


def test_diagnose_names_the_layer_to_look_at_first(home: Path) -> None:
    got = _json("diagnose", "r1", "--home", str(home), "--json")
    # the demo's first finish cites a document never read: the verifier rejects it
    assert got["first_layer"] == "termination"
    assert got["findings"][0]["evidence"] == ["r1/t4:verifier.verdict"]
    table = runner.invoke(app, ["diagnose", "r1", "--home", str(home)])
    assert table.exit_code == 0 and "look first at: termination" in table.output


def test_unknown_runs_and_bad_price_tables_are_bad_input(home: Path, tmp_path: Path) -> None:
    for command in ("metrics", "diagnose"):
        result = runner.invoke(app, [command, "nope", "--home", str(home)])
        assert result.exit_code == 2 and "unknown run id" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"m": {"input_per_mtok": -1, "output_per_mtok": 1}}))
    result = runner.invoke(app, ["metrics", "r1", "--home", str(home), "--prices", str(bad)])
    assert result.exit_code == 2 and "must be a number >= 0" in result.output


def test_both_commands_are_listed() -> None:
    result = runner.invoke(app, ["--help"])
    assert "metrics" in result.output and "diagnose" in result.output


@pytest.mark.timeout(180)
def test_both_commands_classify_the_runs_decision_errors(home: Path) -> None:
    """The demo's rejected first finish is a stop-judgement error, read from the log."""
    counts = _json("metrics", "r1", "--home", str(home), "--json")["counts"]
    assert counts["decision_errors"]["stop_judgement"] >= 1
    got = _json("diagnose", "r1", "--home", str(home), "--json")
    kinds = {e["kind"]: e for e in got["decision_errors"]}
    assert kinds["stop_judgement"]["turn_id"] == "t4"  # the turn whose finish was rejected
    table = runner.invoke(app, ["diagnose", "r1", "--home", str(home)])
    assert "decision errors of run r1" in table.output and "stop judgement" in table.output
    shown = runner.invoke(app, ["metrics", "r1", "--home", str(home)])
    assert "decision errors" in shown.output and "tool recovery" in shown.output
