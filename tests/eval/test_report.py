"""The report: strict JSON, markdown tables and plots, all read from the JSON form."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from execgraph.eval import report
from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.runner import evaluate
from tests.eval.helpers import no_nan, small


def _est(mean: Any, low: Any, high: Any, n: int = 5) -> dict[str, Any]:
    return {"mean": mean, "low": low, "high": high, "n": n}


def test_report_writes_strict_json_markdown_and_plots(tmp_path: Path) -> None:
    rep = evaluate(small(ablations=tuple(ABLATIONS)))
    written = report.write_report(rep, tmp_path)
    assert written["note"] is None
    data = no_nan(written["json"].read_text())
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
    data = report.to_json(evaluate(small(seeds=1, faults=False)))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    written = report.write_report(data, tmp_path)
    assert written["plots"] == [] and "matplotlib is not installed" in written["note"]
    assert written["json"].is_file() and written["markdown"].is_file()


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
