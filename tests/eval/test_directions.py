"""The direction seed 002 section 15.1 predicts for each ablation, on the noisy policy.

One evaluation (8 tasks, two per class; react and workflow; every ablation; 5 seeds;
noise 0.25) and only *directions* asserted, never exact numbers: each comparison is of
the report's means over seeds, ablation vs baseline on the same tasks and noise draws
(paired by seed). Where the effect is large the paired 95% interval must exclude zero too.

Fixed workflow vs dynamic loop, measured: react accepts more than workflow. The reason is
structural, not a tuning accident: after a rejected finish or a failed step the dynamic
loop can go back and redo the step, while the fixed path has no way back and ends
PARTIAL or FAILED.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.runner import EvalConfig, EvalReport, evaluate, quick_config
from execgraph.eval.suite import task_def

pytestmark = pytest.mark.timeout(600)

ARCHS = ("react", "workflow")


@pytest.fixture(scope="module")
def measured() -> EvalReport:
    short = [t for t in quick_config().tasks if task_def(t).task.task_class != "long_horizon"]
    config = EvalConfig(
        tasks=tuple(short),  # the long class has its own test (test_long_tasks)
        architectures=ARCHS,
        ablations=tuple(ABLATIONS),
        seeds=5,
        noise=0.25,
        faults=False,
        workers=2,
    )
    report = evaluate(config)
    errors = [(r.cell.run_id, r.error_type, r.error) for r in report.results if not r.ok]
    assert not errors, errors[:3]
    return report


def _mean(report: EvalReport, arch: str, ablation: str, metric: str) -> float:
    return report.summary[(arch, ablation)][metric].mean


def _effect(report: EvalReport, arch: str, ablation: str, metric: str) -> Any:
    return report.effects[(arch, ablation)][metric]


def _shown(report: EvalReport, ablation: str, metric: str) -> str:
    return "; ".join(
        f"{a}: {_mean(report, a, BASELINE, metric):.4g} -> {_mean(report, a, ablation, metric):.4g}"
        for a in ARCHS
    )


def test_tools_off_lowers_acceptance(measured: EvalReport) -> None:
    for arch in ARCHS:
        effect = _effect(measured, arch, "tools_off", "acceptance_rate")
        assert effect.mean < 0 and effect.high < 0, _shown(measured, "tools_off", "acceptance_rate")


def test_gate_off_lets_more_completed_runs_fail_acceptance(measured: EvalReport) -> None:
    metric = "completed_but_failed_rate"
    for arch in ARCHS:
        assert _mean(measured, arch, "gate_off", metric) > _mean(
            measured, arch, BASELINE, metric
        ), _shown(measured, "gate_off", metric)


def test_loop_guard_off_raises_ineffective_loops_and_cost_per_success(
    measured: EvalReport,
) -> None:
    for metric in ("ineffective_loop_ratio", "cost_per_success_usd"):
        off = _mean(measured, "react", "loop_guard_off", metric)
        on = _mean(measured, "react", BASELINE, metric)
        assert off > on or (math.isinf(off) and not math.isinf(on)), _shown(
            measured, "loop_guard_off", metric
        )


def test_full_history_costs_more_input_tokens_per_decision(measured: EvalReport) -> None:
    metric = "input_tokens_per_decision"
    for arch in ARCHS:
        full = _mean(measured, arch, "full_history", metric)
        assert full > _mean(measured, arch, BASELINE, metric), _shown(
            measured, "full_history", metric
        )


def test_the_dynamic_loop_accepts_more_than_the_fixed_workflow(measured: EvalReport) -> None:
    react = _mean(measured, "react", BASELINE, "acceptance_rate")
    workflow = _mean(measured, "workflow", BASELINE, "acceptance_rate")
    assert react > workflow, f"react {react:.3f} vs workflow {workflow:.3f}"
    assert measured.fixed_vs_dynamic["acceptance_rate"].mean == pytest.approx(react - workflow)
