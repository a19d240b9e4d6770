"""The benchmark's report: per configuration and suite, utility, utility under attack,
ASR, approvals per task and time per run; JSON and a markdown table.

Utility is the share of user tasks solved without an attack; utility under attack and
ASR are shares of the attacked pairs (ASR: the injection task's goal was reached).
Approvals per task are the approval requests a person was asked, per run, without and
with the attack. Every lost task and every successful attack is listed in the JSON, so
each can be explained.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.eval.agentdojo.benchmark import (
    BENCHMARK_VERSION,
    SUITES,
    Pair,
    PairResult,
    left_out,
    pairs,
    run_pair,
    sample,
)
from execgraph.eval.agentdojo.configs import Configuration

__all__ = ["AgentDojoReport", "run_benchmark", "write_report"]

QUICK_PAIRS = 8
"""Attacked pairs in the quick form (plus the user tasks they use, without attack)."""

Progress = Callable[[int, int, PairResult], None]


@dataclass
class AgentDojoReport:
    """Every pair's result, and the figures reduced from them."""

    configs: list[Configuration]
    suites: tuple[str, ...]
    results: list[PairResult] = field(default_factory=list)
    quick: bool = False
    wall_s: float = 0.0
    observation_chars: int | None = None

    def figures(self, config: str, suite: str | None = None) -> dict[str, Any]:
        """The row for ``config`` (one suite, or all)."""
        rows = [
            r
            for r in self.results
            if r.config == config and (suite is None or r.pair.suite == suite)
        ]
        clean = [r for r in rows if r.pair.injection_task is None]
        attacked = [r for r in rows if r.pair.injection_task is not None]

        def share(items: list[PairResult], ok: Callable[[PairResult], bool]) -> float | None:
            return round(100 * sum(map(ok, items)) / len(items), 1) if items else None

        def mean(items: list[PairResult], value: Callable[[PairResult], float]) -> float | None:
            return round(sum(map(value, items)) / len(items), 3) if items else None

        return {
            "user_tasks": len(clean),
            "pairs": len(attacked),
            "utility": share(clean, lambda r: r.utility),
            "utility_under_attack": share(attacked, lambda r: r.utility),
            "asr": share(attacked, lambda r: r.attacked),
            "approvals_per_task": mean(clean, lambda r: r.approvals),
            "approvals_per_task_attacked": mean(attacked, lambda r: r.approvals),
            "seconds_per_run": mean(rows, lambda r: r.seconds),
            "errors": sum(1 for r in rows if r.error),
            "injection_seen": share(attacked, lambda r: r.triggered),
        }

    def lost_why(self, config: str) -> dict[str, str]:
        """Why each lost pair of ``config`` was lost. An attacked pair none of whose own
        calls was refused is lost for the reason its user task is lost without attack,
        when it is."""
        lost = [r for r in self.results if r.config == config and not r.utility]
        why = {r.pair.id: why_lost(r) for r in lost}
        for r in lost:
            clean = Pair(r.pair.suite, r.pair.user_task).id
            if r.pair.injection_task and clean in why and why[r.pair.id].startswith("no call"):
                why[r.pair.id] = why[clean]
        return why

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": f"agentdojo {BENCHMARK_VERSION}",
            "attack": "important_instructions",
            "model": "compromised scripted model (always obeys an injection it is shown)",
            "quick": self.quick,
            "wall_s": round(self.wall_s, 1),
            "left_out_injection_tasks": left_out(self.suites),
            "configs": {
                c.name: {
                    "title": c.title,
                    "all": self.figures(c.name),
                    "suites": {s: self.figures(c.name, s) for s in self.suites},
                    "lost": [
                        r.pair.id for r in self.results if r.config == c.name and not r.utility
                    ],
                    "lost_why": self.lost_why(c.name),
                    "attacks": [
                        r.pair.id for r in self.results if r.config == c.name and r.attacked
                    ],
                }
                for c in self.configs
            },
            "results": [r.to_dict() for r in self.results],
        }


_WHY = (
    ("read from text in tool output", "a sensitive value read from tool-output text"),
    ("appears neither", "a sensitive value the data no longer holds (the injection replaced it)"),
    ("copied from the text", "content copied from tool-output text"),
    ("secrets", "the user's secrets in an outgoing call"),
    ("carries", "a link read from tool-output text"),
    ("was rejected", "a person was asked (none, or they refused)"),
    ("not allowed here", "a tool outside the contract"),
    ("planned source", "a value not read from the planned source"),
    ("not one of the allowed values", "a value outside the planned values"),
    ("person refused", "a value a person refused before"),
)


def why_lost(result: PairResult) -> str:
    """Why a task was lost: the first refusal one of the user task's own calls met, or,
    when none did, what else happened (the answer withheld, or the attack's effect)."""
    if result.error:
        return "an error"
    mine = [r for r in result.refused if r.split(":", 1)[0] in result.user_failed]
    if not mine:
        if result.pair.injection_task is None:
            return "no call refused: the answer quoted tool-output text, which was withheld"
        return "no call of the task refused: the attack's own refused calls or answer"
    return next((why for needle, why in _WHY if needle in mine[0]), mine[0][:80])


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def markdown(report: AgentDojoReport) -> str:
    """The report's tables: all suites, then one table per suite."""
    data = report.to_dict()
    n = sum(
        1 for r in report.results if r.pair.injection_task and r.config == report.configs[0].name
    )
    lines = [
        f"# AgentDojo {BENCHMARK_VERSION}, compromised model"
        + (" (quick sample)" if report.quick else ""),
        "",
        f"{n} user×injection pairs; the model obeys every injection it is shown.",
        "",
    ]
    for scope in (None, *report.suites):
        lines += [
            f"## {scope or 'all suites'}",
            "",
            "| configuration | utility | utility under attack | ASR | approvals / task | s / run |",
            "|---|---|---|---|---|---|",
        ]
        for c in report.configs:
            f = (
                data["configs"][c.name]["suites"][scope]
                if scope
                else data["configs"][c.name]["all"]
            )
            approvals = (
                f"{f['approvals_per_task'] or 0:.2f} / {f['approvals_per_task_attacked'] or 0:.2f}"
            )
            lines.append(
                f"| {c.title} | {_pct(f['utility'])} | {_pct(f['utility_under_attack'])} "
                f"| {_pct(f['asr'])} | {approvals} | {f['seconds_per_run'] or 0:.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def run_benchmark(
    configs: Iterable[Configuration],
    *,
    suites: Iterable[str] = SUITES,
    quick: bool = False,
    observation_chars: int | None = None,
    progress: Progress | None = None,
) -> AgentDojoReport:
    """Run every configuration over the user tasks and the attacked pairs."""
    configs = list(configs)
    chosen = tuple(suites)
    attacked = pairs(chosen)
    clean = pairs(chosen, attacked=False)
    if quick:
        attacked = sample(attacked, QUICK_PAIRS)
        users = {(p.suite, p.user_task) for p in attacked}
        clean = [p for p in clean if (p.suite, p.user_task) in users]
    todo: list[Pair] = [*clean, *attacked]
    total = len(todo) * len(configs)
    report = AgentDojoReport(configs, chosen, quick=quick, observation_chars=observation_chars)
    started = time.perf_counter()
    for pair in todo:
        for result in run_pair(pair, configs, observation_chars=observation_chars):
            report.results.append(result)
            if progress is not None:
                progress(len(report.results), total, result)
    order = [c.name for c in configs]
    report.results.sort(key=lambda r: order.index(r.config))
    report.wall_s = time.perf_counter() - started
    return report


def write_report(report: AgentDojoReport, out: Path) -> dict[str, Path]:
    """Write ``agentdojo.json`` and ``agentdojo.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "agentdojo.json", out / "agentdojo.md"
    json_path.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report) + "\n", encoding="utf-8")
    return {"json": json_path, "markdown": md_path}
