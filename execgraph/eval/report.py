"""An evaluation's report: versioned JSON, markdown tables and plots.

:func:`to_json` is the one serialized form; :func:`markdown` and :func:`plot` read only
that form, so the notebook (which reads ``eval.json``) shows exactly what ``execgraph eval``
wrote. Everything but ``timing`` is a pure function of the config (:func:`comparable`):
wall-clock figures live under ``timing`` only. Strict JSON has no NaN or infinity: a rate
with an empty denominator is written ``null``, the cost per success of a seed where nothing
was accepted ``"inf"``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from execgraph.eval.ablations import ABLATIONS, BASELINE, FIXED_VS_DYNAMIC

if TYPE_CHECKING:  # reading a written report (markdown, plot) loads no suite
    from execgraph.eval.metrics import Estimate
    from execgraph.eval.runner import CellResult, EvalReport

__all__ = [
    "EFFECT_METRICS",
    "JSON_NAME",
    "MARKDOWN_NAME",
    "METRIC_LABELS",
    "PLOT_NAMES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "comparable",
    "markdown",
    "plot",
    "to_json",
    "write_report",
]

SCHEMA = "execgraph.eval"
SCHEMA_VERSION = 1
JSON_NAME = "eval.json"
MARKDOWN_NAME = "eval.md"
PLOT_NAMES = ("eval_architectures.png", "eval_ablations.png")

METRIC_LABELS: dict[str, tuple[str, str]] = {
    "acceptance_rate": ("acceptance", "rate"),
    "completed_but_failed_rate": ("completed but failed", "rate"),
    "legal_action_rate": ("legal actions", "rate"),
    "tool_success_rate": ("tool success", "rate"),
    "ineffective_loop_ratio": ("ineffective loops", "rate"),
    "recovery_rate": ("recovery (faults)", "rate"),
    "unauthorized_executions": ("unauthorized", "count"),
    "cost_per_success_usd": ("cost / success (USD)", "usd"),
    "input_tokens_per_decision": ("input tokens / decision", "tokens"),
    "errors": ("error cells", "count"),
}
"""Metric key -> (column label, number kind), in table order."""

EFFECT_METRICS: tuple[str, ...] = (
    "acceptance_rate",
    "completed_but_failed_rate",
    "ineffective_loop_ratio",
    "cost_per_success_usd",
    "input_tokens_per_decision",
    "legal_action_rate",
)
"""The metrics the ablation table shows (the ones section 15.1's ablations move)."""

_MEASURES: dict[str, str] = {
    "tools_off": "no tool calls: what acting buys (acceptance should drop)",
    "gate_off": "no acceptance gate: how often a claimed finish is wrong "
    "(completed but failed should rise)",
    "loop_guard_off": "no repeat limit: what the guard saves "
    "(ineffective loops and cost per success should rise)",
    "full_history": "whole transcript as input: the price of context growth "
    "(input tokens per decision should rise)",
}


def _num(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return None if math.isnan(value) else round(value, 6)
    return value


def _est(value: Estimate) -> dict[str, Any]:
    return {
        "mean": _num(value.mean),
        "low": _num(value.low),
        "high": _num(value.high),
        "n": value.n,
    }


def _cell(result: CellResult, timed: Sequence[str]) -> dict[str, Any]:
    c = result.cell
    record: dict[str, Any] = {
        "run_id": c.run_id,
        "task": c.task_id,
        "arch": c.arch,
        "ablation": c.ablation,
        "seed": c.seed,
        "fault": c.fault,
        "error_type": result.error_type,
        "error": result.error,
        "metrics": None,
    }
    if result.metrics is not None:
        values = dataclasses.asdict(result.metrics)
        record["metrics"] = _untimed(values, timed)
    return record


def _untimed(values: Mapping[str, Any], timed: Sequence[str]) -> dict[str, Any]:
    return {k: _num(v) for k, v in values.items() if k not in timed}


def to_json(report: EvalReport) -> dict[str, Any]:
    """The report as JSON-able data (schema :data:`SCHEMA` version :data:`SCHEMA_VERSION`)."""
    from execgraph.eval.runner import TIMING_METRICS  # here: markdown and plot need no suite

    fixed, dynamic = FIXED_VS_DYNAMIC
    per_cell_timing = {
        r.cell.run_id: {k: _num(getattr(r.metrics, k, None)) for k in TIMING_METRICS}
        for r in report.results
        if r.metrics is not None
    }
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "config": report.config.described(),
        "metrics": report.metric_names,
        "summary": [
            {"arch": a, "ablation": b, "metrics": {k: _est(v) for k, v in m.items()}}
            for (a, b), m in report.summary.items()
        ],
        "effects": [
            {"arch": a, "ablation": b, "metrics": {k: _est(v) for k, v in m.items()}}
            for (a, b), m in report.effects.items()
        ],
        "fixed_vs_dynamic": {
            "fixed": fixed,
            "dynamic": dynamic,
            "difference": f"{dynamic} - {fixed}",
            "metrics": {k: _est(v) for k, v in report.fixed_vs_dynamic.items()},
        },
        "groups": [
            {"arch": a, "ablation": b, "seed": s, "metrics": _untimed(m, TIMING_METRICS)}
            for (a, b, s), m in report.groups.items()
        ],
        "cells": [_cell(r, TIMING_METRICS) for r in report.results],
        "timing": {
            "wall_s": report.timing.get("wall_s"),
            "workers": report.timing.get("workers"),
            "summary": [
                {"arch": a, "ablation": b, "metrics": {k: _est(v) for k, v in m.items()}}
                for (a, b), m in report.timing.get("summary", {}).items()
            ],
            "cells": per_cell_timing,
        },
    }


def comparable(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without its wall-clock ``timing``: what the same seed must reproduce."""
    return {k: v for k, v in data.items() if k != "timing"}


def _fmt(value: Any, kind: str, *, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):  # "inf" / "-inf"
        return "∞" if value == "inf" else "-∞"
    sign = "+" if signed else ""
    places = {"rate": 2, "usd": 4, "tokens": 0, "count": 1}[kind]
    shown = round(float(value), places) + 0.0  # + 0.0: -0.3 tokens shows as 0, not -0
    return format(shown, f"{sign}.{places}f")


def _interval(est: Mapping[str, Any] | None, kind: str, *, signed: bool = False) -> str:
    if not est or est.get("mean") is None or not est.get("n"):
        return "n/a"
    mean = _fmt(est["mean"], kind, signed=signed)
    if est["n"] < 2 or est.get("low") is None or est.get("high") is None:
        return mean
    low, high = est["low"], est["high"]
    if not signed and not isinstance(low, str) and not isinstance(high, str):
        # A t-interval cut to what the metric can be: none is negative, a rate is <= 1.
        low, high = max(0.0, low), min(1.0, high) if kind == "rate" else high
    return f"{mean} [{_fmt(low, kind, signed=signed)}, {_fmt(high, kind, signed=signed)}]"


def _rows(data: Mapping[str, Any], section: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["arch"], r["ablation"]): r["metrics"] for r in data.get(section, [])}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def markdown(data: Mapping[str, Any]) -> str:
    """The report's tables: architectures x metrics (baseline), each ablation's paired
    effect vs baseline, and fixed workflow vs dynamic loop; intervals are 95%, over seeds."""
    config = data["config"]
    present = set(data.get("metrics", []))
    columns = [k for k in METRIC_LABELS if k in present]
    summary = _rows(data, "summary")
    archs = config["architectures"]
    noise = config["noise"]
    lines = [
        "### Architectures (baseline)",
        "",
        f"{len(config['tasks'])} tasks x {config['seeds']} seeds per architecture, "
        f"{len(config['faults'])} faults for recovery; model: {config['model']}"
        + (f", noise {noise}" if noise is not None else "")
        + ". Each cell: mean [95% interval] over seeds of the per-seed suite metric "
        "(cut to the metric's range: a rate's to [0, 1], the others' at 0).",
        "",
    ]
    lines += _table(
        ["architecture", *(METRIC_LABELS[k][0] for k in columns)],
        [
            [a, *(_interval(summary[(a, BASELINE)].get(k), METRIC_LABELS[k][1]) for k in columns)]
            for a in archs
            if (a, BASELINE) in summary
        ],
    )
    effects = _rows(data, "effects")
    shown = [k for k in EFFECT_METRICS if k in present]
    ablations = [b for b in config["ablations"] if b != BASELINE]
    if effects and ablations:
        lines += [
            "",
            "### Ablation effects vs baseline",
            "",
            "Delta = ablation - baseline, paired by seed (same tasks, same noise draws).",
            "",
        ]
        lines += [f"- `{b}` ({_settings(b)}): {_MEASURES.get(b, '')}" for b in ablations]
        lines.append("")
        lines += _table(
            ["ablation", "architecture", *(f"Δ {METRIC_LABELS[k][0]}" for k in shown)],
            [
                [
                    b,
                    a,
                    *(
                        _interval(effects[(a, b)].get(k), METRIC_LABELS[k][1], signed=True)
                        for k in shown
                    ),
                ]
                for b in ablations
                for a in archs
                if (a, b) in effects
            ],
        )
    fvd = data.get("fixed_vs_dynamic") or {}
    if fvd.get("metrics"):
        fixed, dynamic = fvd["fixed"], fvd["dynamic"]
        lines += ["", f"### Fixed workflow vs dynamic loop ({fixed} vs {dynamic}, baseline)", ""]
        lines += _table(
            ["metric", fixed, dynamic, f"{dynamic} - {fixed}"],
            [
                [
                    METRIC_LABELS[k][0],
                    _interval(summary[(fixed, BASELINE)].get(k), METRIC_LABELS[k][1]),
                    _interval(summary[(dynamic, BASELINE)].get(k), METRIC_LABELS[k][1]),
                    _interval(fvd["metrics"].get(k), METRIC_LABELS[k][1], signed=True),
                ]
                for k in columns
                if k != "errors"
            ],
        )
    errors = [c for c in data.get("cells", []) if c.get("error_type")]
    lines += ["", f"{len(data.get('cells', []))} runs, {len(errors)} error cells."]
    for cell in errors[:10]:
        lines.append(f"- `{cell['run_id']}`: {cell['error_type']}: {cell['error']}")
    return "\n".join(lines) + "\n"


def _settings(ablation: str) -> str:
    settings = ABLATIONS.get(ablation, {})
    return ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "defaults"


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


def _gap(high: float, low: float) -> float:
    gap = high - low
    return gap if math.isfinite(gap) else 0.0


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
    summary = _rows(data, "summary")
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

    effects = _rows(data, "effects")
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
    return paths


def write_report(report: EvalReport | Mapping[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Write ``eval.json``, ``eval.md`` and the plots under ``out_dir``.

    Returns:
        ``{"json": path, "markdown": path, "plots": [paths], "note": str | None}``; the
        note says why no plots were written (matplotlib missing) instead of failing.
    """
    data = dict(report) if isinstance(report, Mapping) else to_json(report)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / JSON_NAME
    json_path.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    md_path = out / MARKDOWN_NAME
    md_path.write_text(markdown(data), encoding="utf-8")
    note = None
    try:
        plots = plot(data, out)
    except ImportError:
        plots = []
        note = "matplotlib is not installed (pip install 'execgraph[dev]'): no plots written"
    return {"json": json_path, "markdown": md_path, "plots": plots, "note": note}
