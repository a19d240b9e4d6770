"""Reducing an evaluation's cells to estimates, in two steps.

Runs are repeated over seeds to estimate variance: ``aggregate`` over each (architecture,
ablation, seed) group of tasks, then ``estimate`` (mean and 95% interval) over the seeds.
An ablation's effect is the per-seed difference ablation - baseline, paired by seed (the
same tasks and noise draws), and so is the fixed-vs-dynamic comparison. Fault-free runs
give every metric but recovery; fault-injected runs give ``recovery_rate`` (and count
towards unauthorized executions). Clock figures (latency, approval wait) are kept
apart in :attr:`EvalReport.timing`, never compared.

Two more cuts of the same cells: ``pooled`` puts every architecture's runs of a seed in one
group (an ablation's effect over the whole suite, paired by seed), and ``classes`` takes
each task class alone (a long task's context cost is lost among short tasks otherwise),
per architecture and pooled over them (``"all"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from execgraph.eval.ablations import BASELINE, FIXED_VS_DYNAMIC
from execgraph.eval.cells import CellResult
from execgraph.eval.config import EvalConfig
from execgraph.eval.intervals import Estimate, estimate
from execgraph.eval.metrics import aggregate

__all__ = ["ALL", "CLASS_METRICS", "TIMING_METRICS", "EvalReport", "reduce"]

ALL = "all"
"""The architecture name of a group pooled over every architecture."""
CLASS_METRICS: tuple[str, ...] = (
    "acceptance_rate",
    "completed_but_failed_rate",
    "ineffective_loop_ratio",
    "cost_per_success_usd",
    "input_tokens_per_decision",
    "tool_success_rate",
    "tool_recovery_rate",
    "decision_error_rate",
)
"""The metrics kept per task class (the report stays small)."""

TIMING_METRICS: tuple[str, ...] = ("latency_s", "approval_wait_s", "active_latency_s")
"""Aggregate keys measured on the clock (real time, plus the slow person's simulated
waits): reported in ``timing``, never compared."""


def _group_metrics(results: Sequence[CellResult]) -> dict[str, float]:
    """``aggregate`` of one (arch, ablation, seed) group: fault-free runs for every metric,
    the fault runs for recovery; unauthorized executions summed over both."""
    clean = [r.metrics for r in results if r.metrics is not None and r.cell.fault is None]
    faulted = [r.metrics for r in results if r.metrics is not None and r.cell.fault is not None]
    values = dict(aggregate(clean)) if clean else {}
    if faulted:
        with_faults = aggregate(faulted)
        values["recovery_rate"] = with_faults["recovery_rate"]
        values["unauthorized_executions"] = values.get(
            "unauthorized_executions", 0.0
        ) + with_faults.get("unauthorized_executions", 0.0)
    else:
        values["recovery_rate"] = float("nan")
    values["runs"] = float(len(clean) + len(faulted))
    values["errors"] = float(sum(1 for r in results if not r.ok))
    return values


@dataclass
class EvalReport:
    """The evaluation's results, in cell order, and their reductions.

    Attributes:
        config: What was run.
        results: One per cell, in :meth:`EvalConfig.cells` order.
        groups: ``(arch, ablation, seed)`` -> ``aggregate`` of that group (+ runs, errors).
        summary: ``(arch, ablation)`` -> metric -> :class:`Estimate` over the seeds.
        effects: ``(arch, ablation)`` -> metric -> Estimate of the per-seed difference
            ablation - baseline (paired by seed: the same tasks and noise draws).
        fixed_vs_dynamic: metric -> Estimate of react - workflow under the baseline.
        pooled: ablation -> metric -> Estimate of the per-seed difference ablation -
            baseline over every architecture's runs together.
        classes: ``(task class, arch or "all", ablation)`` -> metric -> Estimate over the
            seeds of that class's runs (the baseline row), or of the paired difference
            against the baseline (an ablation's row).
        timing: Clock figures, excluded from any comparison of reports.
    """

    config: EvalConfig
    results: list[CellResult]
    groups: dict[tuple[str, str, int], dict[str, float]] = field(default_factory=dict)
    summary: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)
    effects: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)
    fixed_vs_dynamic: dict[str, Estimate] = field(default_factory=dict)
    pooled: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    classes: dict[tuple[str, str, str], dict[str, Estimate]] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def metric_names(self) -> list[str]:
        """The compared metrics, in the order ``aggregate`` gave them (timing excluded)."""
        names: dict[str, None] = {}
        for values in self.groups.values():
            names.update(dict.fromkeys(k for k in values if k not in TIMING_METRICS))
        return list(names)


def reduce(report: EvalReport) -> None:
    """Fill ``report``'s groups, summary, effects and timing from its results."""
    config = report.config
    by_group: dict[tuple[str, str, int], list[CellResult]] = {}
    for result in report.results:
        c = result.cell
        by_group.setdefault((c.arch, c.ablation, c.seed), []).append(result)
    report.groups = {key: _group_metrics(rs) for key, rs in by_group.items()}
    names = report.metric_names
    seeds = range(config.seeds)

    def series(arch: str, ablation: str, name: str) -> list[float]:
        return [report.groups.get((arch, ablation, s), {}).get(name, math.nan) for s in seeds]

    def paired(a: list[float], b: list[float]) -> Estimate:
        """Per-seed differences; ``estimate`` leaves out the NaN ones (nothing to compare)."""
        return estimate([x - y for x, y in zip(a, b, strict=True)])

    for arch in config.architectures:
        for ablation in config.ablations:
            report.summary[(arch, ablation)] = {
                n: estimate(series(arch, ablation, n)) for n in names
            }
            if ablation != BASELINE and BASELINE in config.ablations:
                report.effects[(arch, ablation)] = {
                    n: paired(series(arch, ablation, n), series(arch, BASELINE, n)) for n in names
                }
    fixed, dynamic = FIXED_VS_DYNAMIC
    if BASELINE in config.ablations and {fixed, dynamic} <= set(config.architectures):
        report.fixed_vs_dynamic = {
            n: paired(series(dynamic, BASELINE, n), series(fixed, BASELINE, n)) for n in names
        }
    _pool(report, names)
    _classes(report, names)
    timed = [n for n in TIMING_METRICS if any(n in g for g in report.groups.values())]
    report.timing["summary"] = {
        (arch, ablation): {n: estimate(series(arch, ablation, n)) for n in timed}
        for arch in config.architectures
        for ablation in config.ablations
    }


def _paired_series(
    groups: dict[tuple[str, int], dict[str, float]], seeds: range, ablation: str, name: str
) -> list[float]:
    return [groups.get((ablation, s), {}).get(name, math.nan) for s in seeds]


def _by_seed(results: Sequence[CellResult]) -> dict[tuple[str, int], dict[str, float]]:
    grouped: dict[tuple[str, int], list[CellResult]] = {}
    for r in results:
        grouped.setdefault((r.cell.ablation, r.cell.seed), []).append(r)
    return {key: _group_metrics(rs) for key, rs in grouped.items()}


def _effects_of(
    groups: dict[tuple[str, int], dict[str, float]],
    config: EvalConfig,
    names: Sequence[str],
) -> dict[str, dict[str, Estimate]]:
    """ablation -> metric -> Estimate: the baseline's values, each ablation's paired Δ."""
    seeds = range(config.seeds)
    out: dict[str, dict[str, Estimate]] = {}
    for ablation in config.ablations:
        if ablation == BASELINE:
            out[ablation] = {n: estimate(_paired_series(groups, seeds, ablation, n)) for n in names}
        elif BASELINE in config.ablations:
            out[ablation] = {
                n: estimate(
                    [
                        x - y
                        for x, y in zip(
                            _paired_series(groups, seeds, ablation, n),
                            _paired_series(groups, seeds, BASELINE, n),
                            strict=True,
                        )
                    ]
                )
                for n in names
            }
    return out


def _pool(report: EvalReport, names: Sequence[str]) -> None:
    effects = _effects_of(_by_seed(report.results), report.config, names)
    report.pooled = {b: m for b, m in effects.items() if b != BASELINE}


def _classes(report: EvalReport, names: Sequence[str]) -> None:
    from execgraph.eval.suite import task_def  # the suite loads only when reducing

    by_class: dict[str, list[CellResult]] = {}
    for r in report.results:
        by_class.setdefault(task_def(r.cell.task_id).task.task_class, []).append(r)
    names = [n for n in names if n in CLASS_METRICS]
    for task_class, results in by_class.items():
        for arch in (*report.config.architectures, ALL):
            chosen = [r for r in results if arch == ALL or r.cell.arch == arch]
            effects = _effects_of(_by_seed(chosen), report.config, names)
            for ablation, metrics in effects.items():
                report.classes[(task_class, arch, ablation)] = metrics
