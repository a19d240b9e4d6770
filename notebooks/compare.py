"""The notebook's data: the ``execgraph eval`` report, read from its JSON.

The notebook shows what ``execgraph eval`` measured, nothing of its own: it reads
``eval.json`` (by default the one ``make test`` writes, ``build/eval-quick/eval.json``, or
``$EXECGRAPH_EVAL_JSON``) and, when there is none or it has another schema version, runs
the quick evaluation in-process and writes it there first. Tables and plots are
:mod:`execgraph.eval.report`'s own, so the notebook and the CLI cannot disagree; the notes
are computed from the same data, never written by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from execgraph.eval.ablations import BASELINE
from execgraph.eval.report import (
    METRIC_LABELS,
    SCHEMA,
    SCHEMA_VERSION,
    markdown,
    plot,
    write_report,
)

__all__ = [
    "DEFAULT_JSON",
    "ENV",
    "EXPECTED",
    "eval_json",
    "load_or_run",
    "markdown",
    "markdown_notes",
    "notes",
    "plot",
]

ENV = "EXECGRAPH_EVAL_JSON"
DEFAULT_JSON = Path(__file__).resolve().parents[1] / "build" / "eval-quick" / "eval.json"

EXPECTED: dict[str, tuple[str, int]] = {
    "tools_off": ("acceptance_rate", -1),
    "gate_off": ("completed_but_failed_rate", +1),
    "loop_guard_off": ("ineffective_loop_ratio", +1),
    "full_history": ("input_tokens_per_decision", +1),
}
"""Ablation -> (the metric the seed predicts it moves, the predicted sign of the change)."""


def eval_json() -> Path:
    """Where the notebook reads the report: ``$EXECGRAPH_EVAL_JSON`` or the quick run's."""
    return Path(os.environ.get(ENV) or DEFAULT_JSON)


def _current(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA or data.get("schema_version") != SCHEMA_VERSION:
        return None  # written by another version: measure again rather than misread it
    return dict(data)


def load_or_run(path: Path | None = None, *, config: Any = None) -> dict[str, Any]:
    """The report at ``path`` (default :func:`eval_json`), running ``config`` (default: the
    quick evaluation) in-process and writing the report next to ``path`` when it is missing."""
    target = path or eval_json()
    data = _current(target)
    if data is not None:
        return data
    from execgraph.eval.runner import evaluate, quick_config

    written = write_report(evaluate(config or quick_config()), target.parent)
    if written["json"] != target:
        target.parent.mkdir(parents=True, exist_ok=True)
        written["json"].replace(target)
    return dict(json.loads(target.read_text(encoding="utf-8")))


def _rows(data: Mapping[str, Any], section: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["arch"], r["ablation"]): r["metrics"] for r in data.get(section, [])}


def _mean(est: Mapping[str, Any] | None) -> float | None:
    value = (est or {}).get("mean")
    return float(value) if isinstance(value, int | float) else None


def _excludes_zero(est: Mapping[str, Any] | None) -> bool:
    low, high = (est or {}).get("low"), (est or {}).get("high")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return False
    return low > 0 or high < 0


def _names(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def notes(data: Mapping[str, Any]) -> list[str]:
    """Findings computed from the report (which way each ablation moved its metric)."""
    config = data["config"]
    summary = _rows(data, "summary")
    effects = _rows(data, "effects")
    archs = list(config["architectures"])
    found: list[str] = []
    base = {a: _mean(summary.get((a, BASELINE), {}).get("acceptance_rate")) for a in archs}
    ranked = sorted((a for a in archs if base[a] is not None), key=lambda a: -(base[a] or 0))
    if ranked:
        found.append(
            "Acceptance under the baseline, highest first: "
            + ", ".join(f"{a} {base[a]:.2f}" for a in ranked)
            + f" ({config['seeds']} seeds x {len(config['tasks'])} tasks each)."
        )
    for ablation, (metric, sign) in EXPECTED.items():
        if ablation not in config["ablations"]:
            continue
        label = METRIC_LABELS[metric][0]
        moved = [a for a in archs if (_mean(effects.get((a, ablation), {}).get(metric)) or 0) != 0]
        agree = [a for a in moved if (_mean(effects[(a, ablation)].get(metric)) or 0) * sign > 0]
        clear = [a for a in agree if _excludes_zero(effects[(a, ablation)].get(metric))]
        way = "rose" if sign > 0 else "fell"
        found.append(
            f"`{ablation}`: {label} {way} as the seed predicts for {_names(agree)}"
            f" (interval excludes 0: {_names(clear)}); moved the other way for "
            f"{_names(a for a in moved if a not in agree)}."
        )
    unauthorized = [
        g for g in data.get("groups", []) if (g["metrics"].get("unauthorized_executions") or 0) > 0
    ]
    found.append(
        "Unauthorized executions: "
        + ("none in any run." if not unauthorized else f"{len(unauthorized)} groups had some!")
    )
    errors = [c for c in data.get("cells", []) if c.get("error_type")]
    if errors:
        found.append(f"{len(errors)} runs raised instead of ending (error cells).")
    return found


def markdown_notes(items: Iterable[str]) -> str:
    """:func:`notes` as a markdown list."""
    return "\n".join(f"- {item}" for item in items)
