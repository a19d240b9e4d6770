"""The evaluation runner, report and CLI: real runs, real SQLite logs, real worker processes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from execgraph.cli.commands import app
from execgraph.eval import metrics, report, runner, suite
from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.runner import (
    Cell,
    EvalConfig,
    evaluate,
    quick_config,
    run_cell,
    select_tasks,
)
from execgraph.state.errors import UsageError

SUITE, FAULTS = suite.SUITE, suite.FAULTS
FIRST = SUITE[0]


def _no_nan(text: str) -> Any:
    def refuse(const: str) -> Any:
        raise AssertionError(f"non-JSON number {const} in the report")

    return json.loads(text, parse_constant=refuse)


def _small(**overrides: Any) -> EvalConfig:
    settings: dict[str, Any] = {
        "tasks": (FIRST.id,),
        "architectures": ("react", "workflow"),
        "ablations": (BASELINE,),
        "seeds": 2,
        "workers": 1,
    }
    return EvalConfig(**{**settings, **overrides})


def test_a_cell_runs_and_its_metrics_come_from_its_event_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, list[Any]] = {}
    costs: list[dict[str, float]] = []
    load, declared = runner.load_events, runner.declared_costs

    def spy(store: Any, run_id: str) -> list[Any]:
        seen[run_id] = load(store, run_id)
        return seen[run_id]

    def spy_costs(tools: Any) -> dict[str, float]:
        costs.append(declared(tools))
        return costs[-1]

    monkeypatch.setattr(runner, "load_events", spy)
    monkeypatch.setattr(runner, "declared_costs", spy_costs)
    cell = Cell(FIRST.id, "react", BASELINE, seed=0)
    result = run_cell(cell)
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and list(seen) == [cell.run_id]
    events = seen[cell.run_id]
    assert events and {e.run_id for e in events} == {cell.run_id}
    assert any(str(e.type) == "tool.started" for e in events)
    # The metrics are exactly the log's, with the suite's verdict passed in.
    assert result.metrics == metrics.run_metrics(
        events,
        accepted=result.metrics.accepted,
        prices=suite.POLICY_PRICES,
        tool_costs=costs[0],
    )
    assert result.metrics.tool_calls == sum(1 for e in events if str(e.type) == "tool.started")
    assert isinstance(result.metrics.accepted, bool)
    # The run's prices reached the metrics: its model calls cost something.
    assert result.metrics.model_cost_usd > 0 and result.metrics.unpriced_model_calls == 0


def test_a_cell_with_a_fault_reports_whether_it_recovered() -> None:
    task = next(t for t in SUITE if t.faults)
    result = run_cell(Cell(task.id, "react", BASELINE, seed=0, fault=task.faults[0]))
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and result.metrics.fault == task.faults[0]
    assert isinstance(result.metrics.recovered, bool)


def test_an_exploding_task_is_an_error_cell_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare = runner.prepare

    def exploding(task: Any, workdir: Path, *, fault: str | None = None) -> Any:
        if task.id == FIRST.id and fault is None:
            raise RuntimeError(f"fixture broke under {workdir}")
        return prepare(task, workdir, fault=fault)

    monkeypatch.setattr(runner, "prepare", exploding)
    second = next(t for t in SUITE if t.id != FIRST.id)
    rep = evaluate(_small(tasks=(FIRST.id, second.id), faults=False, seeds=1))
    by_task = {r.cell.task_id: r for r in rep.results if r.cell.arch == "react"}
    broken = by_task[FIRST.id]
    assert not broken.ok and broken.error_type == "RuntimeError"
    assert broken.error == "fixture broke under <cell>"  # no random temp path in the report
    data = report.to_json(rep)
    assert data["groups"][0]["metrics"]["errors"] == 1
    flagged = [c for c in data["cells"] if c["error_type"]]
    assert {c["task"] for c in flagged} == {FIRST.id} and len(flagged) == 2  # one per arch
    assert "RuntimeError: fixture broke under <cell>" in report.markdown(data)


def test_results_keep_cell_order_and_group_per_arch_ablation_seed() -> None:
    config = _small(faults=False)
    rep = evaluate(config)
    assert [r.cell for r in rep.results] == config.cells()
    assert set(rep.groups) == {(a, BASELINE, s) for a in ("react", "workflow") for s in (0, 1)}
    for key, estimates in rep.summary.items():
        assert key[1] == BASELINE
        est = estimates["acceptance_rate"]
        assert est.n == 2 and est.low <= est.mean <= est.high


def test_same_seed_same_json_and_timing_kept_apart() -> None:
    first = report.to_json(evaluate(_small()))
    second = report.to_json(evaluate(_small()))
    assert report.comparable(first) == report.comparable(second)
    assert "timing" in first and "timing" not in report.comparable(first)
    text = json.dumps(report.comparable(first))
    assert "latency_s" not in text and "approval_wait_s" not in text and "wall_s" not in text
    assert first["schema"] == report.SCHEMA and first["schema_version"] == report.SCHEMA_VERSION


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_one_worker_and_two_workers_give_the_same_json() -> None:
    one = report.to_json(evaluate(_small(workers=1)))
    two = report.to_json(evaluate(_small(workers=2)))
    assert two["timing"]["workers"] == 2 and one["timing"]["workers"] == 1
    assert report.comparable(one) == report.comparable(two)


@pytest.mark.integration
def test_different_seeds_give_different_trajectories() -> None:
    tasks = tuple(t.id for t in SUITE[::3])
    rep = evaluate(_small(tasks=tasks, seeds=3, architectures=("react",), faults=False))
    per_seed = {json.dumps(g, sort_keys=True, default=str) for g in rep.groups.values()}
    assert len(per_seed) > 1  # the noisy policy draws differently per seed


def test_report_writes_strict_json_markdown_and_plots(tmp_path: Path) -> None:
    rep = evaluate(_small(ablations=tuple(ABLATIONS)))
    written = report.write_report(rep, tmp_path)
    assert written["note"] is None
    data = _no_nan(written["json"].read_text())
    assert report.comparable(data) == json.loads(json.dumps(report.comparable(report.to_json(rep))))
    md = written["markdown"].read_text()
    assert md == report.markdown(data)
    assert "| architecture | acceptance |" in md
    assert re.search(r"\| react \| \d\.\d\d \[\d\.\d\d, \d\.\d\d\] \|", md)
    assert "### Fixed workflow vs dynamic loop (workflow vs react, baseline)" in md
    assert "### Ablation effects vs baseline" in md and "| gate_off | react |" in md
    assert [p.name for p in written["plots"]] == list(report.PLOT_NAMES)
    for path in written["plots"]:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_report_says_so_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = report.to_json(evaluate(_small(seeds=1, faults=False)))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    written = report.write_report(data, tmp_path)
    assert written["plots"] == [] and "matplotlib is not installed" in written["note"]
    assert written["json"].is_file() and written["markdown"].is_file()


def test_config_refuses_unknown_names_and_resolves_classes() -> None:
    with pytest.raises(UsageError, match="unknown architecture nope"):
        EvalConfig(architectures=("nope",))
    with pytest.raises(UsageError, match="unknown ablation"):
        EvalConfig(ablations=("no_gate",))
    with pytest.raises(UsageError, match="unknown fault"):
        EvalConfig(faults=("meteor",))
    with pytest.raises(UsageError, match="seeds"):
        EvalConfig(seeds=0)
    with pytest.raises(UsageError, match="noise"):
        EvalConfig(noise=1.5)
    with pytest.raises(UsageError, match="unknown task or task class"):
        select_tasks(["no-such-task"])
    klass = FIRST.task_class
    assert select_tasks([klass]) == tuple(t.id for t in SUITE if t.task_class == klass)
    assert select_tasks([FIRST.id, FIRST.id]) == (FIRST.id,)


def test_cells_cover_the_grid_and_faults_only_under_their_ablations() -> None:
    config = EvalConfig(seeds=2, ablations=tuple(ABLATIONS))
    cells = config.cells()
    clean = [c for c in cells if c.fault is None]
    assert len(clean) == len(SUITE) * len(config.architectures) * len(ABLATIONS) * 2
    faulted = [c for c in cells if c.fault is not None]
    assert faulted and {c.ablation for c in faulted} == {BASELINE}
    assert {c.fault for c in faulted} == {f for t in SUITE for f in t.faults}
    assert len({c.run_id for c in cells}) == len(cells)  # one run id per cell
    assert EvalConfig().seeds >= 5


def test_quick_config_covers_every_class_in_two_seeds() -> None:
    quick = quick_config()
    classes = {t.task_class for t in SUITE if t.id in quick.tasks}
    assert classes == {t.task_class for t in SUITE}
    assert quick.seeds == 2 and quick.ablations == tuple(ABLATIONS)
    assert set(quick.fault_names) <= set(FAULTS) and len(quick.fault_names) <= 3
    assert len(quick.tasks) == 8 and quick.fault_names


def test_cli_eval_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["eval", "--tasks", FIRST.id, "--arch", "react", "--arch", "workflow"]
    args += ["--ablation", BASELINE, "--seeds", "2", "--workers", "1", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| architecture | acceptance |" in result.output
    data = _no_nan((out / "eval.json").read_text())
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


def _est(mean: Any, low: Any, high: Any, n: int = 5) -> dict[str, Any]:
    return {"mean": mean, "low": low, "high": high, "n": n}


def test_markdown_formats_intervals_cuts_them_to_range_and_shows_the_missing() -> None:
    data = {
        "config": {
            "tasks": ["t"],
            "architectures": ["react", "workflow"],
            "ablations": [BASELINE, "gate_off"],
            "seeds": 5,
            "faults": [],
            "noise": 0.25,
            "model": "suite policy",
        },
        "metrics": ["acceptance_rate", "cost_per_success_usd", "recovery_rate"],
        "summary": [
            {
                "arch": "react",
                "ablation": BASELINE,
                "metrics": {
                    "acceptance_rate": _est(0.9, 0.8, 1.05),
                    "cost_per_success_usd": _est(0.002, -0.001, 0.005),
                    "recovery_rate": _est(None, None, None, 0),
                },
            },
            {
                "arch": "workflow",
                "ablation": BASELINE,
                "metrics": {
                    "acceptance_rate": _est(0.5, 0.5, 0.5, 1),
                    "cost_per_success_usd": _est("inf", "inf", "inf"),
                    "recovery_rate": _est(1.0, 1.0, 1.0),
                },
            },
        ],
        "effects": [
            {
                "arch": "react",
                "ablation": "gate_off",
                "metrics": {"acceptance_rate": _est(0.1, -0.05, 0.25)},
            }
        ],
        "fixed_vs_dynamic": {"fixed": "workflow", "dynamic": "react", "metrics": {}},
        "cells": [],
    }
    md = report.markdown(data)
    assert "| react | 0.90 [0.80, 1.00] | n/a | 0.0020 [0.0000, 0.0050] |" in md
    assert "| workflow | 0.50 | 1.00 [1.00, 1.00] | ∞ [∞, ∞] |" in md  # one seed: no interval
    assert "| gate_off | react | +0.10 [-0.05, +0.25] |" in md  # a difference is not cut
    assert "verifier_gate=False" in md and "| gate_off | workflow |" not in md


def test_a_user_cancel_reaches_the_store_the_run_polls() -> None:
    task = next(t for t in SUITE if "user_cancels" in t.faults)
    result = run_cell(Cell(task.id, "react", BASELINE, seed=0, noise=0.0, fault="user_cancels"))
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and result.metrics.status == "CANCELLED"
    assert result.metrics.recovered is True


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
