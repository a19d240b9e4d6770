"""notebooks/compare.py: the notebook reads the eval report, or runs the quick one first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from execgraph.eval import runner, suite
from execgraph.eval.ablations import BASELINE
from execgraph.eval.report import SCHEMA_VERSION
from execgraph.eval.runner import EvalConfig
from notebooks import compare

TINY = EvalConfig(
    tasks=(suite.SUITE[0].id,),
    architectures=("react",),
    ablations=(BASELINE,),
    seeds=1,
    faults=False,
    workers=1,
)


def test_missing_json_runs_the_given_config_and_writes_it(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "eval.json"
    data = compare.load_or_run(target, config=TINY)
    assert target.is_file() and json.loads(target.read_text()) == data
    assert data["config"]["architectures"] == ["react"] and len(data["cells"]) == 1
    assert (target.parent / "eval.md").is_file()


def test_an_existing_json_is_read_not_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "eval.json"
    first = compare.load_or_run(target, config=TINY)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("ran an evaluation although eval.json exists")

    monkeypatch.setattr(runner, "evaluate", refuse)
    assert compare.load_or_run(target) == first


def test_a_json_of_another_schema_version_is_measured_again(tmp_path: Path) -> None:
    target = tmp_path / "eval.json"
    target.write_text(json.dumps({"schema": "execgraph.eval", "schema_version": 0}))
    data = compare.load_or_run(target, config=TINY)
    assert data["schema_version"] == SCHEMA_VERSION and data["cells"]


def test_eval_json_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(compare.ENV, raising=False)
    assert compare.eval_json() == compare.DEFAULT_JSON
    assert compare.DEFAULT_JSON.parts[-3:] == ("build", "eval-quick", "eval.json")
    monkeypatch.setenv(compare.ENV, str(tmp_path / "x.json"))
    assert compare.eval_json() == tmp_path / "x.json"


def _est(mean: float, low: float, high: float) -> dict[str, Any]:
    return {"mean": mean, "low": low, "high": high, "n": 5}


def test_notes_say_which_way_each_ablation_moved_its_metric() -> None:
    data = {
        "config": {
            "architectures": ["react", "workflow"],
            "ablations": ["baseline", "gate_off"],
            "seeds": 5,
            "tasks": ["a", "b"],
        },
        "summary": [
            {
                "arch": "react",
                "ablation": "baseline",
                "metrics": {"acceptance_rate": _est(0.8, 0.7, 0.9)},
            },
            {
                "arch": "workflow",
                "ablation": "baseline",
                "metrics": {"acceptance_rate": _est(0.5, 0.4, 0.6)},
            },
        ],
        "effects": [
            {
                "arch": "react",
                "ablation": "gate_off",
                "metrics": {"completed_but_failed_rate": _est(0.2, 0.1, 0.3)},
            },
            {
                "arch": "workflow",
                "ablation": "gate_off",
                "metrics": {"completed_but_failed_rate": _est(-0.05, -0.1, 0.02)},
            },
        ],
        "groups": [{"metrics": {"unauthorized_executions": 0.0}}],
        "cells": [{"error_type": None}, {"error_type": "RuntimeError"}],
    }
    text = compare.markdown_notes(compare.notes(data))
    assert "highest first: react 0.80, workflow 0.50 (5 seeds x 2 tasks each)" in text
    assert (
        "`gate_off`: completed but failed rose as the seed predicts for react "
        "(interval excludes 0: react); moved the other way for workflow." in text
    )
    assert "tools_off" not in text  # not run, so nothing is said about it
    assert "Unauthorized executions: none in any run." in text
    assert "1 runs raised instead of ending" in text
