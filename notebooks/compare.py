"""Measure the research-assistant demo under the four architectures, for the notebook.

Each run is one fresh, isolated execution: its own temporary home (workspace, SQLite
execution store), an in-memory checkpointer, the offline policy model (deterministic, no
network). Approvals are answered by the variant's scripted person. Everything reported is
read back from the run's own state (``out["budget"]["used"]``, ``out["feedback"]``, the
interrupts seen, the workspace) — nothing is estimated. Wall time is measured with
``time.perf_counter`` around the invocations only (graph compilation excluded); it is noise
on a single machine and is reported, never asserted.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.demo.build import build_demo_graph, demo_task
from execgraph.graph.build import ARCHITECTURES
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = [
    "ARCHITECTURES",
    "COLUMNS",
    "VARIANTS",
    "Variant",
    "compare",
    "interpret",
    "markdown_notes",
    "markdown_table",
    "measure",
    "plot",
]

_MAX_RESUMES = 20  # a run that keeps asking is a bug, not something to wait on forever


@dataclass(frozen=True)
class Variant:
    """One way of running the demo task.

    Attributes:
        name: Short id used in the table.
        description: What changes, in one line.
        approval: The scripted person's answer to every approval request.
        budgets: Budget overrides merged into ``demo_task()["budgets"]``.
        policy: Policy rules passed to ``build_demo_graph(..., policy=...)``.
    """

    name: str
    description: str
    approval: str = "approve"
    budgets: Mapping[str, int] = field(default_factory=dict)
    policy: Sequence[Mapping[str, Any]] | None = None


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("default", "the demo task; the person approves publishing"),
        Variant("reject", "the person rejects every publish approval", approval="reject"),
        Variant("tight_budget", "the task allows only 4 tool calls", budgets={"tool_calls": 4}),
        Variant(
            "deny_publish",
            "a policy rule denies publish_report outright",
            policy=[{"tool": "publish_report", "decision": "deny"}],
        ),
    )
}

COLUMNS: tuple[str, ...] = (
    "arch",
    "variant",
    "status",
    "model_calls",
    "tool_calls",
    "tools_ok",
    "denied",
    "tokens_in",
    "tokens_out",
    "approvals",
    "rejections",
    "published",
    "wall_ms",
    "reason",
)
"""Row keys, in table order (see :func:`measure` for their meaning)."""


def _approval_requests(interrupts: Iterable[Any]) -> int:
    """How many approval requests a batch of interrupts carries (a batch counts each call)."""
    count = 0
    for item in interrupts:
        value = getattr(item, "value", None)
        if isinstance(value, Mapping) and value.get("kind") == "approval_batch":
            count += len(value.get("calls") or ())
        else:
            count += 1
    return count


def _variant(variant: Variant | str) -> Variant:
    if isinstance(variant, Variant):
        return variant
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS[variant]


def measure(arch: str, variant: Variant | str = "default") -> dict[str, Any]:
    """Run the demo once under ``arch`` and ``variant`` and return the measured row.

    Returns:
        A dict with the :data:`COLUMNS` keys: final ``status``; ``model_calls``,
        ``tool_calls``, ``tokens_in``, ``tokens_out`` as counted by the run's budget;
        ``tools_ok`` (results that succeeded) and ``denied`` (calls refused by a policy or
        a person, never executed); ``approvals`` (approval requests raised); ``rejections``
        (finish candidates the verifier rejected); ``published`` (the report exists in the
        outbox); ``wall_ms`` (run time, reported only); ``reason`` (why a non-completed run
        stopped, empty when COMPLETED). Also ``open_items``, for the interpretation.
    """
    spec = _variant(variant)
    home = Path(tempfile.mkdtemp(prefix=f"execgraph-{arch}-{spec.name}-"))
    store = SqliteExecutionStore(home / "exec.db")
    try:
        kwargs: dict[str, Any] = {}
        if spec.policy is not None:
            kwargs["policy"] = [dict(rule) for rule in spec.policy]
        app = build_demo_graph(arch, home=home, checkpointer=InMemorySaver(), store=store, **kwargs)
        task = demo_task()
        task["budgets"] = {**task.get("budgets", {}), **spec.budgets}
        cfg = {"configurable": {"thread_id": f"compare-{arch}-{spec.name}"}}

        approvals = 0
        started = time.perf_counter()
        out = app.invoke({"task": task}, cfg)
        for _ in range(_MAX_RESUMES):
            if "__interrupt__" not in out:
                break
            approvals += _approval_requests(out["__interrupt__"])
            answer = {i.id: {"action": spec.approval} for i in out["__interrupt__"]}
            out = app.invoke(Command(resume=answer), cfg)
        wall_ms = (time.perf_counter() - started) * 1000.0

        used = out["budget"]["used"]
        results = list(out.get("results", {}).values())
        feedback = [f["text"] for f in out.get("feedback", [])]
        error = out.get("error") or {}
        status = str(out["status"])
        return {
            "arch": arch,
            "variant": spec.name,
            "status": status,
            "model_calls": int(used.get("model_calls", 0)),
            "tool_calls": int(used.get("tool_calls", 0)),
            "tools_ok": sum(1 for r in results if r.get("outcome") == "succeeded"),
            "denied": sum(1 for r in results if r.get("status") == "DENIED"),
            "tokens_in": int(used.get("tokens_in", 0)),
            "tokens_out": int(used.get("tokens_out", 0)),
            "approvals": approvals,
            "rejections": sum(1 for text in feedback if text.startswith("finish rejected")),
            "published": (home / "workspace" / "published" / "report.md").is_file(),
            "wall_ms": round(wall_ms, 1),
            "reason": "" if status == "COMPLETED" else str(error.get("message", "")),
            "open_items": list(out.get("open_items") or []),
        }
    finally:
        store.close()
        shutil.rmtree(home, ignore_errors=True)


def compare(
    archs: Iterable[str] = ARCHITECTURES, variants: Iterable[Variant | str] = tuple(VARIANTS)
) -> list[dict[str, Any]]:
    """One :func:`measure` row per (variant, arch), variants outermost."""
    arch_list = list(archs)
    return [measure(arch, variant) for variant in variants for arch in arch_list]


def _cell(value: Any, width: int = 70) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """The rows as a GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def markdown_notes(notes: Iterable[str]) -> str:
    """:func:`interpret` notes as a markdown list (an indented note becomes a sub-item)."""
    return "\n".join(
        f"  - {note.strip()}" if note.startswith("  ") else f"- {note.strip()}" for note in notes
    )


def plot(rows: Sequence[Mapping[str, Any]], path: str | Path | None = None) -> Any:
    """Grouped bars of model and tool calls per architecture and variant, plus wall time.

    Uses the non-interactive ``Agg`` backend (no display is needed or assumed).

    Returns:
        The matplotlib Figure (also written to ``path`` as PNG when given).
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    archs = list(dict.fromkeys(str(r["arch"]) for r in rows))
    variants = list(dict.fromkeys(str(r["variant"]) for r in rows))
    by = {(str(r["arch"]), str(r["variant"])): r for r in rows}
    fig = Figure(figsize=(13, 4.2 * 3), layout="constrained")
    axes = fig.subplots(3, 1)
    width = 0.8 / max(len(variants), 1)
    panels = (
        ("model_calls", "model calls"),
        ("tool_calls", "tool calls"),
        ("wall_ms", "wall time (ms, one run each)"),
    )
    for ax, (key, label) in zip(axes, panels, strict=True):
        for j, variant in enumerate(variants):
            xs = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(archs))]
            ys = [float(by[(a, variant)][key]) if (a, variant) in by else 0.0 for a in archs]
            bars = ax.bar(xs, ys, width, label=variant)
            if key != "wall_ms":
                tags = [
                    str(by[(a, variant)]["status"])[:4] if (a, variant) in by else "" for a in archs
                ]
                ax.bar_label(bars, labels=tags, fontsize=7, rotation=90)
        ax.set_xticks(range(len(archs)), archs)
        ax.set_ylabel(label)
        ax.margins(y=0.25)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title("research demo, offline policy: cost per architecture (bar label = status)")
    axes[0].legend(title="variant", ncols=len(variants), loc="upper left")
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def _row(rows: Sequence[Mapping[str, Any]], arch: str, variant: str) -> Mapping[str, Any] | None:
    return next((r for r in rows if r["arch"] == arch and r["variant"] == variant), None)


def _names(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def _spread(values: Iterable[int]) -> str:
    vals = list(values)
    lo, hi = min(vals), max(vals)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def interpret(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Findings computed from the measured rows (nothing here is a fixed claim)."""
    notes: list[str] = []
    archs = list(dict.fromkeys(str(r["arch"]) for r in rows))
    default = [r for r in rows if r["variant"] == "default"]
    if default:
        done = [r for r in default if r["status"] == "COMPLETED"]
        notes.append(
            f"Default task: {len(done)} of {len(default)} architectures reached COMPLETED "
            f"({_names(str(r['arch']) for r in done)})."
        )
        for r in default:
            if r["rejections"] and r["status"] == "COMPLETED":
                notes.append(
                    f"{r['arch']}: the verifier rejected {r['rejections']} finish candidate(s) "
                    f"and the run looped back, gathered the missing evidence and was accepted "
                    f"({r['model_calls']} model calls, {r['tool_calls']} tool calls)."
                )
            elif r["rejections"]:
                notes.append(
                    f"{r['arch']}: the verifier rejected the finish and the run could not loop "
                    f"back to fix it, so it ends {r['status']} with open items: "
                    f"{'; '.join(r.get('open_items') or []) or 'none recorded'}."
                )
            elif r["status"] != "COMPLETED":
                notes.append(f"{r['arch']}: ends {r['status']}: {r['reason'] or 'no reason'}.")
            if r["status"] != "COMPLETED" and not r["approvals"] and not r["published"]:
                notes.append(
                    f"  {r['arch']} never reached a publish approval (0 asked), so nothing "
                    "was published and the publish check stays open."
                )
        if done:
            cheapest = min(done, key=lambda r: (r["model_calls"], r["tokens_in"]))
            dearest = max(done, key=lambda r: (r["model_calls"], r["tokens_in"]))
            notes.append(
                f"Among completed runs, {cheapest['arch']} used the fewest model calls "
                f"({cheapest['model_calls']}, {cheapest['tokens_in']} tokens in) and "
                f"{dearest['arch']} the most ({dearest['model_calls']}, "
                f"{dearest['tokens_in']} tokens in); {_spread(r['tool_calls'] for r in done)} "
                "tool calls each."
            )
    for name in ("reject", "deny_publish"):
        subset = [r for r in rows if r["variant"] == name]
        if not subset:
            continue
        leaked = [str(r["arch"]) for r in subset if r["published"]]
        how = "rejected by the person" if name == "reject" else "denied by policy"
        notes.append(
            f"Publishing {how}: published by {_names(leaked)}; final statuses "
            + ", ".join(f"{r['arch']} {r['status']}" for r in subset)
            + "; refused calls "
            + ", ".join(f"{r['arch']} {r['denied']}" for r in subset)
            + "; approvals asked "
            + ", ".join(f"{r['arch']} {r['approvals']}" for r in subset)
            + "."
        )
        if name == "deny_publish" and not any(r["approvals"] for r in subset):
            notes.append("  The deny rule refused before any person was asked for approval.")
        retried = [r for r in subset if r["denied"] > 1]
        if retried:
            notes.append(
                "  Retrying a refused publish did not help: "
                + "; ".join(
                    f"{r['arch']} tried {r['denied']} times and stopped with "
                    f"'{r['reason'] or r['status']}'"
                    for r in retried
                )
                + "."
            )
        once = [r for r in subset if r["denied"] <= 1 and r["approvals"] and not r["published"]]
        if once:
            notes.append(
                "  Took the first 'no' as final: "
                + "; ".join(f"{r['arch']} ({r['status']}: {r['reason']})" for r in once)
                + "."
            )
        dearest = max(subset, key=lambda r: (r["model_calls"], r["tool_calls"]))
        notes.append(
            f"  Most spent before stopping: {dearest['arch']}, {dearest['model_calls']} model "
            f"calls and {dearest['tool_calls']} tool calls ({dearest['tokens_in']} tokens in)."
        )
    tight = [r for r in rows if r["variant"] == "tight_budget"]
    if tight:
        exhausted = [str(r["arch"]) for r in tight if r["status"] == "BUDGET_EXHAUSTED"]
        notes.append(
            f"Tool-call budget of {VARIANTS['tight_budget'].budgets['tool_calls']}: "
            f"BUDGET_EXHAUSTED for {_names(exhausted)}; no run exceeded it "
            f"(max tool calls counted: {max(r['tool_calls'] for r in tight)})."
        )
    walls = [float(r["wall_ms"]) for r in rows]
    if walls:
        medians = ", ".join(
            f"{a} {median(float(r['wall_ms']) for r in rows if r['arch'] == a):.0f}" for a in archs
        )
        notes.append(
            f"Wall time ranged {min(walls):.0f}–{max(walls):.0f} ms per run (median per "
            f"architecture, ms: {medians}). These are single runs of an offline policy with no "
            "network on a shared machine: they measure the runtime's own overhead and are "
            "noisy, so compare architectures by the counted model and tool calls instead."
        )
    notes.append(
        "One task and one scripted policy: this shows how each control structure reacts to "
        "the same events (a rejected finish, a refused approval, a budget), not that one "
        "architecture is better in general."
    )
    return notes
