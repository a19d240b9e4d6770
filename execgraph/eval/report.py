"""An evaluation's report: versioned JSON, markdown tables and plots, written together.

:func:`to_json` is the one serialized form; :func:`markdown`
(:mod:`~execgraph.eval.report_tables`) and :func:`plot` (:mod:`~execgraph.eval.report_plots`)
read only that form, so the notebook (which reads ``eval.json``) shows exactly what
``execgraph eval`` wrote. Everything but ``timing`` is a pure function of the config
(:func:`comparable`): wall-clock figures live under ``timing`` only. Strict JSON has no NaN
or infinity: a rate with an empty denominator is written ``null``, the cost per success of
a seed where nothing was accepted ``"inf"`` (and a difference against it ``"-inf"``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from execgraph.eval.ablations import FIXED_VS_DYNAMIC
from execgraph.eval.report_plots import PLOT_NAMES, plot
from execgraph.eval.report_tables import EFFECT_METRICS, METRIC_LABELS, markdown

if TYPE_CHECKING:  # reading a written report (markdown, plot) loads no suite
    from execgraph.eval.cells import CellResult
    from execgraph.eval.intervals import Estimate
    from execgraph.eval.reduction import EvalReport

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
    from execgraph.eval.reduction import TIMING_METRICS  # here: markdown and plot need no suite

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
        "pooled": [
            {"ablation": b, "metrics": {k: _est(v) for k, v in m.items()}}
            for b, m in report.pooled.items()
        ],
        "classes": [
            {
                "task_class": c,
                "arch": a,
                "ablation": b,
                "metrics": {k: _est(v) for k, v in m.items()},
            }
            for (c, a, b), m in report.classes.items()
        ],
        "model": _model_info(report),
        "approvals": _approvals(report),
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


def _model_info(report: EvalReport) -> dict[str, Any]:
    """What answered: the configured model, the names its replies reported (a provider's
    dated version), and the temperature it was given."""
    seen = sorted({name for r in report.results if r.metrics for name in r.metrics.models})
    config = report.config
    return {
        "name": config.model or "suite policy",
        "versions": seen,
        "temperature": config.temperature,
    }


def _approvals(report: EvalReport) -> dict[str, Any]:
    """Approvals asked and answered after they expired, per architecture (every cell)."""
    out: dict[str, Any] = {}
    for r in report.results:
        if r.metrics is None:
            continue
        row = out.setdefault(r.cell.arch, {"approvals": 0, "expired": 0})
        row["approvals"] += r.metrics.approvals
        row["expired"] += r.metrics.approvals_expired
    return out


def comparable(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without its wall-clock ``timing``: what the same seed must reproduce."""
    return {k: v for k, v in data.items() if k != "timing"}


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
