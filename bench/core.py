"""Shared pieces: result rows with targets, and a context that caches the long runs.

The long (1,000-step) run of each framework is expensive, and three measurements read it
(cost per step, growth, SQLite size) and a fourth reopens its thread (resume), so it runs
once per framework per benchmark and is shared.
"""

from __future__ import annotations

import gc
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.workload import RunRecord, run_steps

__all__ = ["Bench", "Row", "Target"]


@dataclass(frozen=True)
class Target:
    """A target from the issue: ``value <= limit`` (or ``>=`` when ``at_least``)."""

    limit: float
    text: str
    on: str = "ratio"  # "ratio" (execgraph / baseline) or "value" (execgraph's own figure)
    at_least: bool = False

    def holds(self, value: float) -> bool:
        """Whether ``value`` meets the target."""
        return value >= self.limit if self.at_least else value <= self.limit


@dataclass
class Row:
    """One comparison: execgraph's figure, the baseline's, their ratio and a target."""

    section: str
    metric: str
    ours: float | None
    base: float | None
    unit: str
    baseline: str
    target: Target | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """execgraph ÷ baseline (None when either is missing or the baseline is zero)."""
        if self.ours is None or not self.base:
            return None
        return self.ours / self.base

    @property
    def verdict(self) -> str:
        """PASS / MISS against the target, ``-`` without one, ``n/a`` without figures."""
        if self.target is None:
            return "-"
        value = self.ratio if self.target.on == "ratio" else self.ours
        if value is None:
            return "MISS" if self.ours is None else "n/a"
        return "PASS" if self.target.holds(value) else "MISS"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "section": self.section,
            "metric": self.metric,
            "execgraph": self.ours,
            "baseline": self.base,
            "baseline_name": self.baseline,
            "unit": self.unit,
            "ratio": self.ratio,
            "target": self.target.text if self.target else None,
            "verdict": self.verdict,
            "note": self.note,
        }


@dataclass
class Bench:
    """Settings and shared state of one benchmark run."""

    quick: bool = False
    long_steps: int = 1000
    step_counts: tuple[int, ...] = (10, 100, 1000)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="execgraph-bench-")))
    log: Callable[[str], None] = print
    extras: dict[str, Any] = field(default_factory=dict)
    _long: dict[str, RunRecord] = field(default_factory=dict)
    _counter: int = 0
    _warm: bool = False

    def __post_init__(self) -> None:
        if self.quick:
            self.long_steps = min(self.long_steps, 100)
            self.step_counts = tuple(n for n in self.step_counts if n <= self.long_steps)

    def fresh_dir(self, label: str) -> Path:
        """A new empty directory under the run's temp root."""
        self._counter += 1
        path = self.root / f"{self._counter:03d}-{label}"
        path.mkdir(parents=True)
        return path

    def warm_up(self) -> None:
        """One short untimed run per framework: imports and first-call caches are paid here."""
        if self._warm:
            return
        from bench.workload import FRAMEWORKS

        for framework in FRAMEWORKS:
            run_steps(framework, 2, self.fresh_dir(f"warm-{framework}"))
        self._warm = True

    def run(self, framework: str, n: int, *, pause: bool = False) -> RunRecord:
        """One timed run of ``framework`` for ``n`` steps in a fresh directory."""
        self.warm_up()
        gc.collect()
        record = run_steps(framework, n, self.fresh_dir(f"{framework}-{n}"), pause=pause)
        self.log(
            f"  {framework:<20} {n:>5} steps  {record.total_s:8.2f} s  "
            f"{record.per_step_ms:8.2f} ms/step  {record.status}"
        )
        return record

    def long_run(self, framework: str) -> RunRecord:
        """The shared long run of ``framework`` (execgraph's ends at an approval pause)."""
        if framework not in self._long:
            self._long[framework] = self.run(framework, self.long_steps, pause=True)
        return self._long[framework]

    def cleanup(self) -> None:
        """Remove the temp root."""
        shutil.rmtree(self.root, ignore_errors=True)
