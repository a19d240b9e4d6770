"""Run the suite x architectures x ablations x seeds, in parallel processes.

One *cell* is one run: a task, an architecture, an ablation, a seed and at most one
injected fault. :func:`run_cell` runs it in isolation (a fresh temporary directory, its own
SQLite execution store, an in-memory checkpointer), answers the run's interrupts with the
suite's scripted person, judges it with the suite's own acceptance checker and reads every
metric back from the run's event log. A cell that raises becomes an *error cell* (its
exception type and message), never the end of the evaluation.

:func:`evaluate` runs all cells of an :class:`EvalConfig` in a process pool and reduces
them in two steps, as the seed asks (section 15.1: repeat runs to estimate variance):
``aggregate`` over each (architecture, ablation, seed) group of tasks, then ``estimate``
(mean and 95% interval) over the seeds. Fault-free runs give every metric but recovery;
fault-injected runs give ``recovery_rate`` (and count towards unauthorized executions).

Determinism: a cell's trajectory depends only on (task, arch, ablation, seed, noise, fault),
its run id is derived from them, and results are kept in cell order whatever order the
workers finish in; so the same config gives the same report. Wall-clock figures (latency,
approval wait, the eval's own duration) are kept apart in :attr:`EvalReport.timing`.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.eval.ablations import ABLATIONS, BASELINE, FIXED_VS_DYNAMIC
from execgraph.eval.metrics import (
    Estimate,
    RunMetrics,
    aggregate,
    declared_costs,
    estimate,
    load_events,
    run_metrics,
)
from execgraph.eval.suite import FAULTS, POLICY_PRICES, SUITE, EvalTask, policy_model, prepare
from execgraph.graph.build import ARCHITECTURES, build_graph
from execgraph.state.errors import UsageError
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = [
    "MAX_RESUMES",
    "TIMING_METRICS",
    "Cell",
    "CellResult",
    "EvalConfig",
    "EvalReport",
    "Progress",
    "evaluate",
    "quick_config",
    "run_cell",
    "select_tasks",
]

MAX_RESUMES = 25
"""Interrupts answered per run at most: a run that keeps asking is a finding, not a hang."""

TIMING_METRICS: tuple[str, ...] = ("latency_s", "approval_wait_s")
"""Aggregate keys measured on the wall clock: reported in ``timing``, never compared."""

_TASKS: dict[str, EvalTask] = {task.id: task for task in SUITE}

Progress = Callable[[int, int, "CellResult"], None]
"""``progress(done, total, result)``, called as each cell finishes (in finishing order)."""


@dataclass(frozen=True)
class Cell:
    """One run of the evaluation (everything its trajectory depends on)."""

    task_id: str
    arch: str
    ablation: str = BASELINE
    seed: int = 0
    fault: str | None = None
    noise: float = 0.25
    model: str | None = None
    """A ``provider:model`` string replacing the suite's policy (then ``noise`` is unused)."""

    @property
    def run_id(self) -> str:
        """The thread and run id, derived from the cell so reruns log under the same id."""
        tail = f"-{self.fault}" if self.fault else ""
        return f"eval-{self.arch}-{self.ablation}-s{self.seed}-{self.task_id}{tail}"


@dataclass(frozen=True)
class CellResult:
    """A cell and what it measured: metrics from its log, or the error that stopped it."""

    cell: Cell
    metrics: RunMetrics | None
    error_type: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.metrics is not None


def _scrub(text: str, workdir: Path) -> str:
    """An error message without the cell's random temporary path (reports must compare)."""
    for form in {str(workdir), str(workdir.resolve())}:
        text = text.replace(form, "<cell>")
    return text[:500]


def _drive(graph: Any, prepared: Any, run_id: str) -> Mapping[str, Any]:
    """Invoke, then answer every interrupt with the scripted person, at most MAX_RESUMES."""
    config = {"configurable": {"thread_id": run_id}}
    values: Mapping[str, Any] = graph.invoke({"task": prepared.task}, config)
    for _ in range(MAX_RESUMES):
        interrupts = values.get("__interrupt__")
        if not interrupts:
            break
        answers = {item.id: prepared.answer(item.value) for item in interrupts}
        values = graph.invoke(Command(resume=answers), config)
    return values


def run_cell(cell: Cell) -> CellResult:
    """Run one cell in isolation and read its metrics from its event log.

    Any exception (from the suite, the graph or the metrics) is returned as an error cell
    with the exception's type and message; the temporary directory is always removed.
    """
    workdir = Path(tempfile.mkdtemp(prefix="execgraph-eval-"))
    prepared: Any = None
    store: SqliteExecutionStore | None = None
    try:
        task = _TASKS[cell.task_id]
        prepared = prepare(task, workdir, fault=cell.fault)
        # Where the embedded store would be, and handed to the scripted person: a cancel
        # (user_cancels) must reach the store the run polls.
        store = SqliteExecutionStore(Home(workdir / "home").exec_db)
        prepared.store = store
        model: Any = cell.model or policy_model(
            task, seed=cell.seed, noise=cell.noise, fault=cell.fault
        )
        graph = build_graph(
            cell.arch,
            model=model,
            tools=prepared.tools,
            workspace=prepared.workspace,
            home=workdir / "home",
            policy=prepared.policy,
            stages=prepared.stages,
            checks=prepared.checks,
            prices=POLICY_PRICES,
            store=store,
            checkpointer=InMemorySaver(),
            **ABLATIONS[cell.ablation],
        )
        values = _drive(graph, prepared, cell.run_id)
        accepted = bool(prepared.accept(values))
        recovered = bool(prepared.recovered(values, accepted)) if cell.fault else None
        metrics = run_metrics(
            load_events(store, cell.run_id),
            accepted=accepted,
            fault=cell.fault,
            recovered=recovered,
            prices=POLICY_PRICES,
            tool_costs=declared_costs(prepared.tools),
        )
        return CellResult(cell, metrics)
    except Exception as exc:  # an error cell, never the end of the whole evaluation
        return CellResult(cell, None, type(exc).__name__, _scrub(str(exc), workdir))
    finally:
        if prepared is not None:
            with contextlib.suppress(Exception):  # a stuck server must not hide the result
                prepared.close()
        if store is not None:
            store.close()
        shutil.rmtree(workdir, ignore_errors=True)


def select_tasks(names: Iterable[str]) -> tuple[str, ...]:
    """Task ids for ``names``, each a task id or a task class (suite order, no repeats).

    Raises:
        UsageError: a name that is neither.
    """
    wanted = list(names)
    classes = {task.task_class for task in SUITE}
    for name in wanted:
        if name not in _TASKS and name not in classes:
            raise UsageError(
                f"unknown task or task class {name!r}; classes: {', '.join(sorted(classes))}"
            )
    return tuple(t.id for t in SUITE if t.id in wanted or t.task_class in wanted)


def _check(kind: str, given: Iterable[str], known: Iterable[str]) -> None:
    known = tuple(known)
    unknown = [name for name in given if name not in known]
    if unknown:
        raise UsageError(f"unknown {kind} {', '.join(unknown)}; choose from {', '.join(known)}")


@dataclass(frozen=True)
class EvalConfig:
    """What to run: tasks x architectures x ablations x seeds, plus the fault runs.

    Attributes:
        tasks: Task ids (empty: the whole suite); :func:`select_tasks` resolves classes.
        architectures: Architectures to compare.
        ablations: Names from :data:`~execgraph.eval.ablations.ABLATIONS`.
        seeds: How many seeds (0 .. seeds-1) per cell; at least 5 for a reported interval.
        noise: The noisy policy's per-decision error probability (0: the oracle).
        faults: Run the tasks' fault injections too: True (all), False, or fault names.
        fault_ablations: Ablations the fault runs use (recovery is the runtime's, so the
            baseline by default; every ablation would multiply the fault runs by five).
        workers: Worker processes (default: ``os.cpu_count()``; 1 runs in this process).
            Not part of the result: any worker count gives the same report.
        model: A ``provider:model`` chat model instead of the suite's policy.
    """

    tasks: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ARCHITECTURES
    ablations: tuple[str, ...] = tuple(ABLATIONS)
    seeds: int = 5
    noise: float = 0.25
    faults: bool | tuple[str, ...] = True
    fault_ablations: tuple[str, ...] = (BASELINE,)
    workers: int | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        _check("task", self.tasks, _TASKS)
        _check("architecture", self.architectures, ARCHITECTURES)
        _check("ablation", (*self.ablations, *self.fault_ablations), ABLATIONS)
        if not isinstance(self.faults, bool):
            _check("fault", self.faults, FAULTS)
        if self.seeds < 1:
            raise UsageError(f"seeds must be at least 1, got {self.seeds}")
        if not 0.0 <= self.noise <= 1.0:
            raise UsageError(f"noise is a probability in [0, 1], got {self.noise}")
        if self.workers is not None and self.workers < 1:
            raise UsageError(f"workers must be at least 1, got {self.workers}")

    @property
    def task_ids(self) -> tuple[str, ...]:
        return self.tasks or tuple(_TASKS)

    @property
    def fault_names(self) -> tuple[str, ...]:
        if self.faults is True:
            return FAULTS
        return () if self.faults is False else tuple(self.faults)

    def cells(self) -> list[Cell]:
        """Every cell, in report order: per (arch, ablation, seed), tasks then fault runs."""
        noise = 0.0 if self.model else self.noise
        faults = self.fault_names
        cells: list[Cell] = []
        for arch in self.architectures:
            for ablation in self.ablations:
                for seed in range(self.seeds):
                    runs: list[tuple[str, str | None]] = [(t, None) for t in self.task_ids]
                    if ablation in self.fault_ablations:
                        runs += [
                            (t, f) for t in self.task_ids for f in _TASKS[t].faults if f in faults
                        ]
                    cells += [
                        Cell(t, arch, ablation, seed, fault, noise, self.model) for t, fault in runs
                    ]
        return cells

    def described(self) -> dict[str, Any]:
        """The config as the report records it (no worker count: it changes nothing)."""
        return {
            "tasks": list(self.task_ids),
            "architectures": list(self.architectures),
            "ablations": {name: ABLATIONS[name] for name in self.ablations},
            "seeds": self.seeds,
            "noise": None if self.model else self.noise,
            "faults": list(self.fault_names),
            "fault_ablations": [a for a in self.fault_ablations if a in self.ablations],
            "model": self.model or "suite policy",
            "max_resumes": MAX_RESUMES,
        }


def quick_config(**overrides: Any) -> EvalConfig:
    """The CI subset: 2 tasks per class (those with faults first), every architecture and
    ablation, 2 seeds, and the first 3 faults those tasks cover."""
    chosen: list[EvalTask] = []
    for task_class in dict.fromkeys(task.task_class for task in SUITE):
        members = [t for t in SUITE if t.task_class == task_class]
        chosen += sorted(members, key=lambda t: not t.faults)[:2]  # stable: suite order kept
    covered = {fault for task in chosen for fault in task.faults}
    faults = tuple(f for f in FAULTS if f in covered)[:3]
    settings: dict[str, Any] = {
        "tasks": tuple(t.id for t in SUITE if t in chosen),
        "seeds": 2,
        "faults": faults,
    }
    return EvalConfig(**{**settings, **overrides})


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


def _reduce(report: EvalReport) -> None:
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


def evaluate(config: EvalConfig, *, progress: Progress | None = None) -> EvalReport:
    """Run every cell of ``config`` (in ``config.workers`` processes) and reduce them.

    Results are in cell order whatever order the workers finish in. A worker that dies
    (the pool breaks) turns the cells it could not run into error cells. Workers are
    spawned, so a script calling this with ``workers > 1`` needs multiprocessing's
    ``if __name__ == "__main__":`` guard (the CLI and notebooks need nothing).
    """
    cells = config.cells()
    total = len(cells)
    workers = max(1, min(config.workers or os.cpu_count() or 1, total or 1))
    started = time.perf_counter()
    results: list[CellResult | None] = [None] * total
    done = 0

    def record(i: int, result: CellResult) -> None:
        nonlocal done
        results[i] = result
        done += 1
        if progress is not None:
            progress(done, total, result)

    if workers == 1:
        for i, cell in enumerate(cells):
            record(i, run_cell(cell))
    else:
        # spawn: a worker starts clean (no copied locks or threads of the caller, e.g. a
        # progress bar's refresh thread); it pays one import, once.
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        try:
            futures = {pool.submit(run_cell, cell): i for i, cell in enumerate(cells)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    result = future.result()
                except Exception as exc:  # the worker died (BrokenProcessPool, ...)
                    result = CellResult(cells[i], None, type(exc).__name__, str(exc)[:500])
                record(i, result)
        except BaseException:  # Ctrl-C: drop the queued cells instead of running them all
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    report = EvalReport(config=config, results=[r for r in results if r is not None])
    _reduce(report)
    report.timing.update(
        {"wall_s": round(time.perf_counter() - started, 3), "workers": workers, "cells": total}
    )
    return report
