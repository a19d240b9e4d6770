"""The evaluation runner and its CLI: real runs, real worker processes, cell order kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from execgraph.cli.commands import app
from execgraph.eval import report, runner
from execgraph.eval.ablations import BASELINE
from execgraph.eval.runner import EvalConfig, evaluate
from tests.eval.helpers import FIRST, SUITE, no_nan, small


def test_results_keep_cell_order_and_group_per_arch_ablation_seed() -> None:
    config = small(faults=False)
    rep = evaluate(config)
    assert [r.cell for r in rep.results] == config.cells()
    assert set(rep.groups) == {(a, BASELINE, s) for a in ("react", "workflow") for s in (0, 1)}
    for key, estimates in rep.summary.items():
        assert key[1] == BASELINE
        est = estimates["acceptance_rate"]
        assert est.n == 2 and est.low <= est.mean <= est.high


def test_same_seed_same_json_and_timing_kept_apart() -> None:
    first = report.to_json(evaluate(small()))
    second = report.to_json(evaluate(small()))
    assert report.comparable(first) == report.comparable(second)
    assert "timing" in first and "timing" not in report.comparable(first)
    text = json.dumps(report.comparable(first))
    assert "latency_s" not in text and "approval_wait_s" not in text and "wall_s" not in text
    assert first["schema"] == report.SCHEMA and first["schema_version"] == report.SCHEMA_VERSION


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_one_worker_and_two_workers_give_the_same_json() -> None:
    one = report.to_json(evaluate(small(workers=1)))
    two = report.to_json(evaluate(small(workers=2)))
    assert two["timing"]["workers"] == 2 and one["timing"]["workers"] == 1
    assert report.comparable(one) == report.comparable(two)


@pytest.mark.integration
def test_different_seeds_give_different_trajectories() -> None:
    tasks = tuple(t.id for t in SUITE[::3])
    rep = evaluate(small(tasks=tasks, seeds=3, architectures=("react",), faults=False))
    per_seed = {json.dumps(g, sort_keys=True, default=str) for g in rep.groups.values()}
    assert len(per_seed) > 1  # the noisy policy draws differently per seed


def test_cli_eval_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["eval", "--tasks", FIRST.id, "--arch", "react", "--arch", "workflow"]
    args += ["--ablation", BASELINE, "--seeds", "2", "--workers", "1", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| architecture | acceptance |" in result.output
    data = no_nan((out / "eval.json").read_text())
    assert data["config"]["architectures"] == ["react", "workflow"]
    assert data["config"]["seeds"] == 2 and len(data["groups"]) == 4
    assert (out / "eval.md").is_file() and (out / "eval_architectures.png").is_file()


def test_cli_eval_refuses_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--arch", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown architecture nope" in result.output
    result = CliRunner().invoke(app, ["eval", "--tasks", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown task or task class" in result.output
    result = CliRunner().invoke(app, ["eval", "--model", "nosuch:m", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown model provider 'nosuch'" in result.output
    assert not (tmp_path / "eval.json").exists()  # refused before any run


def test_cli_eval_exits_4_when_any_run_executed_without_authorization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_evaluate = runner.evaluate

    def leaky(config: EvalConfig, **kwargs: Any) -> Any:
        rep = real_evaluate(config, **kwargs)
        next(iter(rep.groups.values()))["unauthorized_executions"] = 1.0
        return rep

    monkeypatch.setattr(runner, "evaluate", leaky)
    args = ["eval", "--tasks", FIRST.id, "--arch", "react", "--ablation", BASELINE]
    result = CliRunner().invoke(
        app, [*args, "--seeds", "1", "--workers", "1", "--no-faults", "--out", str(tmp_path)]
    )
    assert result.exit_code == 4 and "1 unauthorized executions" in result.output
