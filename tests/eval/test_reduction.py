"""Reducing cells to estimates: a paired difference against a seed with no success is
infinite, and the report says so (JSON ``"-inf"``, markdown ``-∞``) instead of failing."""

from __future__ import annotations

import dataclasses
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


def _config(**overrides: Any) -> EvalConfig:
    settings: dict[str, Any] = {
        "tasks": (SUITE[0].id, "ledger-chain"),
        "architectures": ("react", "workflow"),
        "ablations": (BASELINE, "full_history"),
        "seeds": 3,
        "faults": False,
        "workers": 1,
    }
    return EvalConfig(**{**settings, **overrides})


def _tokens(run_id: str, tokens: int, *, accepted: bool) -> RunMetrics:
    m = _metrics(run_id, accepted=accepted)
    return dataclasses.replace(m, input_tokens=tokens)


def test_long_class_and_pooled_effects_are_reduced_apart_and_reported() -> None:
    config = _config()
    results = []
    for c in config.cells():
        long = c.task_id == "ledger-chain"
        tokens = (300 if c.ablation == "full_history" else 100) if long else 100
        tokens += c.seed  # a spread over seeds, the same in both settings
        results.append(CellResult(c, _tokens(c.run_id, tokens, accepted=True)))
    report = EvalReport(config=config, results=results)
    reduce(report)
    long = report.classes[("long_horizon", "all", "full_history")]["input_tokens_per_decision"]
    assert long.mean == 100.0 and long.low == long.high == 100.0  # (300 - 100) / 2 decisions
    short = report.classes[(SUITE[0].task_class, "react", "full_history")]
    assert short["input_tokens_per_decision"].mean == 0.0
    pooled = report.pooled["full_history"]["input_tokens_per_decision"]
    assert pooled.mean == 50.0  # half the runs are long
    data = to_json(report)
    json.dumps(data, allow_nan=False)
    text = markdown(data)
    assert "### Long tasks" in text and "### Ablation effects over every architecture" in text
    assert "+100 [+100, +100]" in text


def test_nan_and_infinite_paired_differences_do_not_crash_the_estimate() -> None:
    """At high noise a seed may accept nothing under both settings (inf - inf: NaN) or
    under one (±inf): the reduction leaves the first out and reports the second."""
    config = _config(architectures=("react",), tasks=(SUITE[0].id,), seeds=4)
    nothing = {(BASELINE, 0), ("full_history", 0), (BASELINE, 1)}
    results = [
        CellResult(c, _metrics(c.run_id, accepted=(c.ablation, c.seed) not in nothing))
        for c in config.cells()
    ]
    report = EvalReport(config=config, results=results)
    reduce(report)  # must not raise (statistics.stdev of inf/NaN once did)
    effect = report.effects[("react", "full_history")]["cost_per_success_usd"]
    assert effect.n == 3 and effect.mean == -math.inf
    pooled = report.pooled["full_history"]["cost_per_success_usd"]
    assert pooled.n == 3
    json.dumps(to_json(report), allow_nan=False)
