"""Reducing an evaluation's cells to estimates, in two steps.

Runs are repeated over seeds to estimate variance: ``aggregate`` over each (architecture,
ablation, seed) group of tasks, then ``estimate`` (mean and 95% interval) over the seeds.
An ablation's effect is the per-seed difference ablation - baseline, paired by seed (the
same tasks and noise draws), and so is the fixed-vs-dynamic comparison. Fault-free runs
give every metric but recovery; fault-injected runs give ``recovery_rate`` (and count
towards unauthorized executions). Wall-clock figures (latency, approval wait) are kept
apart in :attr:`EvalReport.timing`, never compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from execgraph.eval.ablations import BASELINE, FIXED_VS_DYNAMIC
from execgraph.eval.cells import CellResult
from execgraph.eval.config import EvalConfig
from execgraph.eval.metrics import Estimate, aggregate, estimate

__all__ = ["TIMING_METRICS", "EvalReport", "reduce"]

TIMING_METRICS: tuple[str, ...] = ("latency_s", "approval_wait_s")
"""Aggregate keys measured on the wall clock: reported in ``timing``, never compared."""


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
        timing: Wall-clock figures, excluded from any comparison of reports.
    """

    config: EvalConfig
    results: list[CellResult]
    groups: dict[tuple[str, str, int], dict[str, float]] = field(default_factory=dict)
    summary: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)
    effects: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)
    fixed_vs_dynamic: dict[str, Estimate] = field(default_factory=dict)
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
    timed = [n for n in TIMING_METRICS if any(n in g for g in report.groups.values())]
    report.timing["summary"] = {
        (arch, ablation): {n: estimate(series(arch, ablation, n)) for n in timed}
        for arch in config.architectures
        for ablation in config.ablations
    }
