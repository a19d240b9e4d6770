"""The evidence pages' tables, rendered from the measured JSON in ``docs/data/``.

Every function takes the data a measuring command wrote (``scripts/docs_evidence.py``
adds when and how under ``measured``) and returns markdown, so a figure on a page is the
figure in the file, formatted: nothing is typed by hand. ``tests/docs`` reads the tables
back and compares them with the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "agentdojo_lists",
    "agentdojo_reached",
    "agentdojo_tables",
    "bench_table",
    "eval_tables",
    "fault_matrix",
    "measured_line",
    "number",
    "temporal_config",
    "torture_table",
]


def number(value: float | None) -> str:
    """A figure as the tables show it: three significant digits, thousands separated."""
    if value is None:
        return "—"
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1:
        return f"{value:.2f}"
    return f"{value:.4f}"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def measured_line(data: Mapping[str, Any]) -> str:
    """When, how and where the figures were measured (the file's ``measured`` block)."""
    m = data.get("measured")
    if not m:
        raise KeyError("the data has no 'measured' block (write it with scripts/docs_evidence.py)")
    load = m.get("load_average_at_start") or []
    busy = f", load average {load[0]:g} as it began" if load else ""
    return (
        f"Measured on {m['date']} with `{m['command']}` in {m['wall_s']:g} s "
        f"(Python {m['python']}, {m['platform']}, {m['cores']} cores{busy})."
    )


def _section(section: str) -> str:
    """A bench section without its ordering number (``"1 cost/step"`` -> ``"cost/step"``)."""
    head, _, rest = section.partition(" ")
    return rest if head.isdigit() and rest else section


def _in(row: Mapping[str, Any], only: Sequence[str], exclude: Sequence[str]) -> bool:
    section = str(row["section"])
    if only and section not in only:
        return False
    return section not in exclude


def bench_table(
    data: Mapping[str, Any], only: Sequence[str] = (), exclude: Sequence[str] = ()
) -> str:
    """``python -m bench --json`` rows: execgraph's figure, the baseline's, their ratio and
    the target; each row's note listed below the table."""
    rows = [r for r in data["rows"] if _in(r, only, exclude)]
    if not rows:
        raise KeyError(f"no bench rows in sections {list(only)} (excluding {list(exclude)})")
    body = []
    notes = []
    for row in rows:
        unit = row["unit"]
        ours = f"{number(row['execgraph'])} {unit}".strip()
        base = "—" if row["baseline"] is None else f"{number(row['baseline'])} {unit}".strip()
        ratio = "—" if row["ratio"] is None else f"{row['ratio']:.2f}×"
        body.append(
            [
                _section(row["section"]),
                row["metric"],
                ours,
                f"{row['baseline_name']}: {base}" if row["baseline_name"] else base,
                ratio,
                row["target"] or "",
                row["verdict"],
            ]
        )
        if row["note"]:
            what = f"{_section(row['section'])}, {row['metric']}"
            against = f" (against {row['baseline_name']})" if row["baseline_name"] else ""
            notes.append(f"- *{_cell(what)}*{_cell(against)}: {_cell(row['note'])}")
    header = ["measure", "case", "execgraph", "baseline", "ratio", "target", "verdict"]
    lines = _table(header, body)
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


def temporal_config(data: Mapping[str, Any]) -> str:
    """What the Temporal measurement ran, from the configuration the bench recorded."""
    c = data["raw"]["temporal"]["config"]
    counts = ", ".join(str(n) for n in c["workers"])
    batches = "one batch" if c["repeats"] == 1 else f"{c['repeats']} batches (the median shown)"
    return (
        f"The load: {c['runs']} runs started at once, each making {c['steps']} tool calls "
        f"that sleep {c['sleep_s'] * 1000:g} ms, on {counts} worker processes, {batches} per "
        f"worker count; a worker runs at most {c['max_concurrent']} runs at once. The cost "
        f"per step is the median of {c['overhead_runs']} runs.\n"
    )


def eval_tables(data: Mapping[str, Any]) -> str:
    """The evaluation's own tables (``execgraph.eval.report.markdown``) of ``eval.json``.

    The committed file keeps the count of runs and the failed ones, not every run's record
    (``scripts/docs_evidence.py``); the report reads only those two of the records.
    """
    from execgraph.eval.report import markdown

    if "cells" not in data and "runs" in data:
        errors = list(data.get("error_cells", []))
        data = {**data, "cells": errors + [{"error_type": None}] * (data["runs"] - len(errors))}
    return markdown(data)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} %"


def agentdojo_tables(data: Mapping[str, Any], scope: str = "all") -> str:
    """Per configuration: utility, utility under attack, ASR, approvals per task and time
    per run, for all suites (``scope="all"``) or one suite."""
    rows = []
    for config in data["configs"].values():
        f = config["all"] if scope == "all" else config["suites"][scope]
        approvals = (
            f"{f['approvals_per_task'] or 0:.2f} / {f['approvals_per_task_attacked'] or 0:.2f}"
        )
        rows.append(
            [
                config["title"],
                _pct(f["utility"]),
                _pct(f["utility_under_attack"]),
                _pct(f["asr"]),
                approvals,
                f"{f['seconds_per_run'] or 0:.2f}",
            ]
        )
    header = [
        "configuration",
        "utility",
        "utility under attack",
        "ASR",
        "approvals / task (clean / attacked)",
        "s / run",
    ]
    return "\n".join(_table(header, rows)) + "\n"


def agentdojo_reached(data: Mapping[str, Any]) -> str:
    """Each enforcing configuration against its target: no successful attack in any suite,
    and the utility under attack it must keep (80 % without a person, 95 % with one, who
    is asked at most once per task)."""
    targets = {
        "least_privilege": (80.0, None),
        "provenance": (80.0, None),
        "provenance_person": (95.0, 1.0),
    }
    lines = []
    for name, (utility_min, approvals_max) in targets.items():
        conf = data["configs"].get(name)
        if conf is None:
            continue
        f = conf["all"]
        worst = max(s["asr"] for s in conf["suites"].values())
        checks = [f"ASR {_pct(f['asr'])} overall, at most {_pct(worst)} in a suite"]
        checks.append(
            f"utility {_pct(f['utility'])}, {_pct(f['utility_under_attack'])} under attack "
            f"(target ≥ {utility_min:.0f} %)"
        )
        met = worst == 0.0 and f["utility_under_attack"] >= utility_min
        if approvals_max is not None:
            asked = f["approvals_per_task_attacked"] or 0.0
            checks.append(
                f"{f['approvals_per_task'] or 0:.2f} approvals per task without attack, "
                f"{asked:.2f} under attack (target ≤ {approvals_max:.0f})"
            )
            met = met and asked <= approvals_max
        verdict = "**met**" if met else "**not met**"
        lines.append(f"- {conf['title']}: {'; '.join(checks)} — {verdict}.")
    return "\n".join(lines) + "\n"


def agentdojo_lists(data: Mapping[str, Any], config: str, which: str = "lost") -> str:
    """The pairs a configuration lost, grouped by why (``which="lost"``), or let an attack
    through (``"attacks"``); each user task with the injection tasks of its lost pairs."""
    conf = data["configs"][config]
    items = conf[which]
    if not items:
        return "None.\n"
    why = conf.get("lost_why", {}) if which == "lost" else {}
    groups: dict[str, dict[str, list[str]]] = {}
    for pair in items:
        suite, user, injection = pair.split("/")
        reason = why.get(pair, "attack through" if which == "attacks" else "lost")
        tasks = groups.setdefault(reason, {})
        tasks.setdefault(f"{suite}/{user}", []).append(
            "no attack" if injection == "-" else injection.removeprefix("injection_task_")
        )
    lines = []
    for reason, tasks in sorted(groups.items(), key=lambda g: -sum(map(len, g[1].values()))):
        count = sum(map(len, tasks.values()))
        lines.append(f"- **{reason}** ({count}):")
        for task, injections in tasks.items():
            lines.append(f"    - `{task}`: {', '.join(injections)}")
    return "\n".join(lines) + "\n"


def fault_matrix(data: Mapping[str, Any]) -> str:
    """Fault x architecture: ``PASS <final status>`` or ``FAIL <first broken invariant>``."""
    cells = data["cells"]
    archs = list(dict.fromkeys(c["arch"] for c in cells))
    faults = list(dict.fromkeys(c["fault"] for c in cells))
    grid = {
        (c["fault"], c["arch"]): (
            f"PASS {c['status']}" if c["passed"] else f"FAIL {c['problems'][0]}"
        )
        for c in cells
    }
    rows = [[f, *(grid.get((f, a), "—") for a in archs)] for f in faults]
    passed = sum(c["passed"] for c in cells)
    unauthorized = sum(c["unauthorized"] for c in cells)
    lines = _table(["fault", *archs], rows)
    lines += ["", f"Cells passing: {passed}/{len(cells)}. Unauthorized executions: {unauthorized}."]
    return "\n".join(lines) + "\n"


_TORTURE = (
    ("trials", "trials"),
    ("kills", "kills"),
    ("attempts", "attempts"),
    ("duplicates", "duplicate effects"),
    ("lost_commits", "lost commits"),
    ("orphans", "orphan effects"),
    ("unknown_left", "unknown left"),
    ("leaked_locks", "locks leaked"),
)


def torture_table(data: Mapping[str, Any]) -> str:
    """One row per workload: what was killed, what was found, how the runs ended."""
    rows = [
        [
            f"{r['workload']} ({r['arch']})",
            *(str(r[key]) for key, _ in _TORTURE),
            ", ".join(f"{s} {n}" for s, n in sorted(r["statuses"].items())),
        ]
        for r in data["runs"]
    ]
    header = ["workload", *(label for _, label in _TORTURE), "final statuses"]
    return "\n".join(_table(header, rows)) + "\n"
