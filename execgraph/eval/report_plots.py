"""The report's plots, drawn from its JSON form only (matplotlib, ``Agg``, no display).

Three figures (:data:`PLOT_NAMES`): the baseline's rates per architecture, each
ablation's effect per architecture, as bars with 95% error bars, and the long tasks'
context cost beside each architecture's latency with and without the approval wait.
Like the tables, the plots read what :func:`~execgraph.eval.report.to_json` wrote; a
value that is not a finite number (``null``, ``"inf"``) draws no bar rather than a wrong one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from execgraph.eval.ablations import BASELINE
from execgraph.eval.report_tables import EFFECT_METRICS, LONG_CLASS, METRIC_LABELS, rows

__all__ = ["PLOT_NAMES", "plot"]

PLOT_NAMES = ("eval_architectures.png", "eval_ablations.png", "eval_long_and_latency.png")


def _float(est: Mapping[str, Any] | None, key: str) -> float:
    """A plottable number: NaN for null, "inf" and anything missing (no bar drawn)."""
    value = (est or {}).get(key)
    return float(value) if isinstance(value, int | float) else math.nan


def _grid(figure: Any, panels: int, per_row: int = 3) -> tuple[Any, list[Any]]:
    """A figure of ``panels`` axes, ``per_row`` to a row; unused axes hidden."""
    rows = max(1, math.ceil(panels / per_row))
    cols = max(1, min(panels, per_row))
    fig = figure(figsize=(4.6 * cols, 3.4 * rows), layout="constrained")
    axes = list(fig.subplots(rows, cols, squeeze=False).flat)
    for ax in axes[panels:]:
        ax.set_visible(False)
    return fig, axes


def _rate_range(est: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A rate's estimate with its interval cut to [0, 1], as the table shows it."""
    if not est:
        return None
    low, high = _float(est, "low"), _float(est, "high")
    return {**est, "low": max(0.0, low), "high": min(1.0, high)}


def _at_least_0(est: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A duration's estimate with its interval cut at 0, as the table shows it."""
    if not est:
        return None
    return {**est, "low": max(0.0, _float(est, "low"))}


def _gap(high: float, low: float) -> float:
    """An error bar's length: never negative (an interval whose end rounds past its mean,
    or one that does not contain it), 0 where unknown or infinite."""
    gap = high - low
    return max(gap, 0.0) if math.isfinite(gap) else 0.0


def plot(data: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Write :data:`PLOT_NAMES`: the baseline rates per architecture, and each ablation's
    effect per architecture, as bars with 95% error bars (``Agg`` backend, no display).

    Raises:
        ImportError: matplotlib is not installed (it is in the ``dev`` extra).
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    archs = list(data["config"]["architectures"])
    present = set(data.get("metrics", []))
    summary = rows(data, "summary")
    rates = [k for k, (_, kind) in METRIC_LABELS.items() if kind == "rate" and k in present]

    def bars(ax: Any, groups: Sequence[str], series: Sequence[tuple[str, list[Any]]]) -> None:
        width = 0.8 / max(len(series), 1)
        for j, (label, ests) in enumerate(series):
            xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(groups))]
            means = [_float(e, "mean") for e in ests]
            err = [
                [_gap(m, _float(e, "low")) for m, e in zip(means, ests, strict=True)],
                [_gap(_float(e, "high"), m) for m, e in zip(means, ests, strict=True)],
            ]
            ax.bar(xs, means, width, yerr=err, capsize=2, label=label)
        ax.set_xticks(range(len(groups)), groups, fontsize=8)
        ax.grid(axis="y", alpha=0.3)

    paths: list[Path] = []
    fig, axes = _grid(Figure, len(rates))
    for ax, key in zip(axes, rates, strict=False):
        ests = [_rate_range(summary.get((a, BASELINE), {}).get(key)) for a in archs]
        bars(ax, archs, [("baseline", ests)])
        ax.set_title(METRIC_LABELS[key][0], fontsize=9)
        ax.set_ylim(0, 1.05)
    fig.suptitle("architectures under the baseline: mean and 95% interval over seeds")
    paths.append(out / PLOT_NAMES[0])
    fig.savefig(paths[-1], dpi=90)

    effects = rows(data, "effects")
    ablations = [b for b in data["config"]["ablations"] if b != BASELINE]
    shown = [k for k in EFFECT_METRICS if k in present]
    fig, axes = _grid(Figure, len(shown))
    for ax, key in zip(axes, shown, strict=False):
        series = [(a, [effects.get((a, b), {}).get(key) for b in ablations]) for a in archs]
        bars(ax, ablations, series)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(f"Δ {METRIC_LABELS[key][0]}", fontsize=9)
        ax.tick_params(axis="x", labelrotation=30)
    if shown:
        axes[0].legend(fontsize=7)
    fig.suptitle("ablation - baseline, paired by seed (95% interval)")
    paths.append(out / PLOT_NAMES[1])
    fig.savefig(paths[-1], dpi=90)

    long = {
        (r["arch"], r["ablation"]): r["metrics"]
        for r in data.get("classes", [])
        if r["task_class"] == LONG_CLASS
    }
    timing = {
        (r["arch"], r["ablation"]): r["metrics"]
        for r in (data.get("timing") or {}).get("summary", [])
    }
    fig, axes = _grid(Figure, 3)
    groups = [a for a in [*archs, "all"] if (a, "full_history") in long]
    for ax, key in zip(axes, ("input_tokens_per_decision", "cost_per_success_usd"), strict=False):
        series = [
            ("baseline", [long.get((a, BASELINE), {}).get(key) for a in groups]),
            ("Δ full_history", [long.get((a, "full_history"), {}).get(key) for a in groups]),
        ]
        bars(ax, groups, series)
        ax.set_title(f"long tasks: {METRIC_LABELS[key][0]}", fontsize=9)
        ax.legend(fontsize=7)
    series = [
        (label, [_at_least_0(timing.get((a, BASELINE), {}).get(key)) for a in archs])
        for key, label in (("latency_s", "latency"), ("active_latency_s", "without approval wait"))
    ]
    bars(axes[2], archs, series)
    axes[2].set_yscale("symlog")
    axes[2].set_title("latency per run (s, baseline)", fontsize=9)
    axes[2].legend(fontsize=7)
    fig.suptitle("long tasks' context cost; latency with and without the approval wait")
    paths.append(out / PLOT_NAMES[2])
    fig.savefig(paths[-1], dpi=90)
    return paths
