"""Reducing cells to estimates: a paired difference against a seed with no success is
infinite, and the report says so (JSON ``"-inf"``, markdown ``-∞``) instead of failing."""

from __future__ import annotations

import json
import math
from typing import Any

from execgraph.eval.ablations import BASELINE
from execgraph.eval.cells import CellResult
from execgraph.eval.config import EvalConfig
from execgraph.eval.metrics import RunMetrics
from execgraph.eval.reduction import EvalReport, reduce
from execgraph.eval.report import markdown, to_json
from execgraph.eval.suite import SUITE


def _metrics(run_id: str, *, accepted: bool) -> RunMetrics:
    return RunMetrics(
        run_id=run_id, status="COMPLETED", candidates=2, legal_candidates=2, tool_calls=1,
        tool_calls_succeeded=1, decisions=2, ineffective_decisions=0, unauthorized_executions=0,
        accepted=accepted, fault=None, recovered=None, model_cost_usd=0.1, tool_cost_usd=0.0,
        input_tokens=100, output_tokens=10, model_calls=2, latency_s=1.0, approval_wait_s=0.0,
        reported_completed=True,
    )  # fmt: skip


def test_an_infinite_paired_difference_is_reported_not_a_crash() -> None:
    config = EvalConfig(
        tasks=(SUITE[0].id,),
        architectures=("react",),
        ablations=(BASELINE, "gate_off"),
        seeds=2,
        faults=False,
        workers=1,
    )
    # Seed 0: the baseline accepts nothing (cost per success inf), the ablation does.
    failing = {(BASELINE, 0)}
    results = [
        CellResult(c, _metrics(c.run_id, accepted=(c.ablation, c.seed) not in failing))
        for c in config.cells()
    ]
    report = EvalReport(config=config, results=results)
    reduce(report)
    effect = report.effects[("react", "gate_off")]["cost_per_success_usd"]
    assert (effect.mean, effect.low, effect.high, effect.n) == (-math.inf, -math.inf, -math.inf, 2)
    baseline = report.summary[("react", BASELINE)]["cost_per_success_usd"]
    assert baseline.mean == math.inf
    data: dict[str, Any] = to_json(report)
    json.dumps(data, allow_nan=False)  # strict JSON: infinities are written as strings
    (written,) = data["effects"]
    assert written["metrics"]["cost_per_success_usd"]["mean"] == "-inf"
    assert "-∞ [-∞, -∞]" in markdown(data)
