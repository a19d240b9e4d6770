"""The report's tables, in markdown, read from its JSON form only.

:func:`markdown` takes what :func:`~execgraph.eval.report.to_json` wrote (or a file of
it), never the live report, so the CLI, ``eval.md`` and the notebook show the same
numbers. Three tables: the architectures under the baseline, each ablation's paired effect
against the baseline, and the fixed workflow against the dynamic loop; every cell is a
mean with its 95% interval over the seeds, cut to what the metric can be. An infinite
value (a seed where nothing was accepted costs ``inf`` per success) shows as ``∞``; a
value nothing defines (a rate with an empty denominator) as ``n/a``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.eval.ablations import ABLATIONS, BASELINE

__all__ = ["EFFECT_METRICS", "ERROR_LABELS", "LONG_CLASS", "METRIC_LABELS", "markdown", "rows"]

METRIC_LABELS: dict[str, tuple[str, str]] = {
    "acceptance_rate": ("acceptance", "rate"),
    "completed_but_failed_rate": ("completed but failed", "rate"),
    "legal_action_rate": ("legal actions", "rate"),
    "tool_success_rate": ("tool success", "rate"),
    "tool_recovery_rate": ("tool recovery", "rate"),
    "ineffective_loop_ratio": ("ineffective loops", "rate"),
    "recovery_rate": ("recovery (faults)", "rate"),
    "unauthorized_executions": ("unauthorized", "count"),
    "cost_per_success_usd": ("cost / success (USD)", "usd"),
    "input_tokens_per_decision": ("input tokens / decision", "tokens"),
    "errors": ("error cells", "count"),
}
"""Metric key -> (column label, number kind), in table order."""

ERROR_LABELS: dict[str, str] = {
    "decision_error_rate": "all",
    "error_understanding": "understanding",
    "error_action": "action",
    "error_parameter": "parameter",
    "error_protocol": "protocol",
    "error_timing": "timing",
    "error_stop_judgement": "stop judgement",
}
"""Decision-error keys (per decision) -> column label."""
LONG_CLASS = "long_horizon"
TIMING_LABELS: dict[str, str] = {
    "latency_s": "latency (s)",
    "approval_wait_s": "approval wait (s)",
    "active_latency_s": "latency without approval wait (s)",
}

EFFECT_METRICS: tuple[str, ...] = (
    "acceptance_rate",
    "completed_but_failed_rate",
    "ineffective_loop_ratio",
    "cost_per_success_usd",
    "input_tokens_per_decision",
    "legal_action_rate",
)
"""The metrics the ablation table shows (the ones the ablations are expected to move)."""

_MEASURES: dict[str, str] = {
    "tools_off": "no tool calls: what acting buys (acceptance should drop)",
    "gate_off": "no acceptance gate: how often a claimed finish is wrong "
    "(completed but failed should rise)",
    "loop_guard_off": "no repeat limit: what the guard saves "
    "(ineffective loops and cost per success should rise)",
    "full_history": "whole transcript as input: the price of context growth "
    "(input tokens per decision should rise)",
}


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


def rows(data: Mapping[str, Any], section: str) -> dict[tuple[str, str], dict[str, Any]]:
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
    summary = rows(data, "summary")
    archs = config["architectures"]
    noise = config["noise"]
    lines = [
        "### Architectures (baseline)",
        "",
        f"{len(config['tasks'])} tasks x {config['seeds']} seeds per architecture, "
        f"{len(config['faults'])} faults for recovery; model: {_model(data)}"
        + (f", noise {noise}" if noise is not None else "")
        + (f", flaky services {config['flaky']}" if config.get("flaky") else "")
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
    effects = rows(data, "effects")
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
    lines += _pooled(data, shown)
    lines += _long(data)
    lines += _decision_errors(data)
    lines += _timing(data)
    errors = [c for c in data.get("cells", []) if c.get("error_type")]
    lines += ["", f"{len(data.get('cells', []))} runs, {len(errors)} error cells."]
    for cell in errors[:10]:
        lines.append(f"- `{cell['run_id']}`: {cell['error_type']}: {cell['error']}")
    return "\n".join(lines) + "\n"


def _model(data: Mapping[str, Any]) -> str:
    """The model, the versions its replies reported, and its temperature."""
    info = data.get("model") or {}
    name = str(info.get("name") or data["config"]["model"])
    versions = [v for v in info.get("versions") or [] if v != name]
    shown = name + (f" ({', '.join(versions)})" if versions else "")
    if info.get("temperature") is not None:
        shown += f", temperature {info['temperature']}"
    return shown


def _settings(ablation: str) -> str:
    settings = ABLATIONS.get(ablation, {})
    return ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "defaults"


def _pooled(data: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    pooled = {r["ablation"]: r["metrics"] for r in data.get("pooled", [])}
    if not pooled:
        return []
    lines = [
        "",
        "### Ablation effects over every architecture",
        "",
        "Delta = ablation - baseline, every architecture's runs of a seed together, "
        "paired by seed.",
        "",
    ]
    return lines + _table(
        ["ablation", *(f"Δ {METRIC_LABELS[k][0]}" for k in shown)],
        [
            [b, *(_interval(m.get(k), METRIC_LABELS[k][1], signed=True) for k in shown)]
            for b, m in pooled.items()
        ],
    )


def _long(data: Mapping[str, Any]) -> list[str]:
    classes = {
        (r["arch"], r["ablation"]): r["metrics"]
        for r in data.get("classes", [])
        if r["task_class"] == LONG_CLASS
    }
    if not classes:
        return []
    archs = [*data["config"]["architectures"], "all"]
    columns = [
        ("baseline", "input_tokens_per_decision", False),
        ("full_history", "input_tokens_per_decision", True),
        ("baseline", "cost_per_success_usd", False),
        ("full_history", "cost_per_success_usd", True),
        ("baseline", "acceptance_rate", False),
        ("loop_guard_off", "ineffective_loop_ratio", True),
    ]
    present = [c for c in columns if any((a, c[0]) in classes for a in archs)]
    header = [
        "architecture",
        *(
            ("Δ " if delta else "") + METRIC_LABELS[k][0] + (f" ({b})" if delta else "")
            for b, k, delta in present
        ),
    ]
    lines = [
        "",
        "### Long tasks",
        "",
        "The long class alone (about 30 to 100 decisions over many documents, paused for approval "
        "mid-run): the baseline's values, and each ablation's paired effect on them; `all` "
        "pools every architecture's long runs of a seed.",
        "",
    ]
    return lines + _table(
        header,
        [
            [
                a,
                *(
                    _interval(classes.get((a, b), {}).get(k), METRIC_LABELS[k][1], signed=delta)
                    for b, k, delta in present
                ),
            ]
            for a in archs
            if (a, BASELINE) in classes
        ],
    )


def _decision_errors(data: Mapping[str, Any]) -> list[str]:
    summary = rows(data, "summary")
    keys = [k for k in ERROR_LABELS if k in set(data.get("metrics", []))]
    if not keys:
        return []
    lines = [
        "",
        "### Decision errors (baseline, per decision)",
        "",
        "Classified from each run's event log (`execgraph.eval.decision_errors`), never from "
        "the policy's own labels; a tool's own failure is not counted.",
        "",
    ]
    return lines + _table(
        ["architecture", *(ERROR_LABELS[k] for k in keys)],
        [
            [a, *(_interval(summary[(a, BASELINE)].get(k), "rate") for k in keys)]
            for a in data["config"]["architectures"]
            if (a, BASELINE) in summary
        ],
    )


def _seconds(est: Mapping[str, Any] | None) -> str:
    if not est or est.get("mean") is None or not est.get("n"):
        return "n/a"
    mean, low, high = est["mean"], est.get("low"), est.get("high")
    if est["n"] < 2 or low is None or high is None:
        return f"{mean:.1f}"
    return f"{mean:.1f} [{max(0.0, low):.1f}, {high:.1f}]"


def _timing(data: Mapping[str, Any]) -> list[str]:
    timing = {
        (r["arch"], r["ablation"]): r["metrics"]
        for r in (data.get("timing") or {}).get("summary", [])
    }
    approvals = data.get("approvals") or {}
    keys = [k for k in TIMING_LABELS if any(k in m for m in timing.values())]
    if not keys:
        return []
    config = data["config"]
    lines = [
        "",
        "### Latency and approval wait (baseline)",
        "",
        f"Person: {config.get('person', 'prompt')}. Seconds per run, mean [95% interval] over "
        "seeds, on the store's clock: a slow person's wait is simulated time, the rest is "
        "this machine's (it varies with its load). Expired: approvals answered after "
        "they expired (the runtime refuses the call), over every run of the architecture.",
        "",
    ]
    return lines + _table(
        ["architecture", *(TIMING_LABELS[k] for k in keys), "approvals", "expired"],
        [
            [
                a,
                *(_seconds(timing[(a, BASELINE)].get(k)) for k in keys),
                str((approvals.get(a) or {}).get("approvals", 0)),
                str((approvals.get(a) or {}).get("expired", 0)),
            ]
            for a in config["architectures"]
            if (a, BASELINE) in timing
        ],
    )
