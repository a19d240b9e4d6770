"""What an evaluation runs: tasks x architectures x ablations x seeds, plus the fault runs.

An :class:`EvalConfig` is checked when it is made (every name known, every number in its
range), so a bad command line fails before any run starts, and it lists its cells in
report order (:meth:`EvalConfig.cells`). The worker count is not part of the result: any
count gives the same report. :func:`quick_config` is the subset CI runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.cells import MAX_RESUMES, Cell
from execgraph.eval.suite import FAULTS, SUITE, EvalTask
from execgraph.graph.build import ARCHITECTURES
from execgraph.state.errors import UsageError

__all__ = ["PERSONS", "QUICK_PER_CLASS", "EvalConfig", "quick_config", "select_tasks"]

_TASKS: dict[str, EvalTask] = {task.id: task for task in SUITE}
PERSONS = ("slow", "prompt")
"""How the scripted person answers approvals (:mod:`execgraph.eval.person`)."""
QUICK_PER_CLASS = {"long_horizon": 1}
"""Tasks per class in the CI subset where not 2 (a long task costs ten short ones)."""


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
        temperature: The sampling temperature given to ``model`` (None: its default).
        flaky: The task services' outage rate per request (503, 429, 500, a dropped
            write, a late read; :mod:`execgraph.eval.tasks.flaky`); 0: reliable services.
        person: ``"slow"`` answers approvals after a seeded delay on simulated time, some
            only after they expired (:mod:`execgraph.eval.person`); ``"prompt"`` at once.
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
    temperature: float | None = None
    flaky: float = 0.1
    person: str = "slow"

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
        if not 0.0 <= self.flaky <= 1.0:
            raise UsageError(f"flaky is a probability in [0, 1], got {self.flaky}")
        if self.person not in PERSONS:
            raise UsageError(f"unknown person {self.person!r}; choose from {', '.join(PERSONS)}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise UsageError(f"temperature must be in [0, 2], got {self.temperature}")
        if self.temperature is not None and self.model is None:
            raise UsageError("temperature applies to a --model, not to the suite's policy")
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
                        Cell(
                            t,
                            arch,
                            ablation,
                            seed,
                            fault,
                            noise,
                            self.model,
                            self.flaky,
                            self.person,
                            self.temperature,
                        )
                        for t, fault in runs
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
            "temperature": self.temperature,
            "flaky": self.flaky,
            "person": self.person,
            "max_resumes": MAX_RESUMES,
        }


def quick_config(**overrides: Any) -> EvalConfig:
    """The CI subset: 2 tasks per class (those with faults first; 1 long task), every
    architecture and ablation, 2 seeds, and the first 3 faults those tasks cover."""
    chosen: list[EvalTask] = []
    for task_class in dict.fromkeys(task.task_class for task in SUITE):
        members = [t for t in SUITE if t.task_class == task_class]
        take = QUICK_PER_CLASS.get(task_class, 2)
        chosen += sorted(members, key=lambda t: not t.faults)[:take]  # stable: suite order kept
    covered = {fault for task in chosen for fault in task.faults}
    faults = tuple(f for f in FAULTS if f in covered)[:3]
    settings: dict[str, Any] = {
        "tasks": tuple(t.id for t in SUITE if t in chosen),
        "seeds": 2,
        "faults": faults,
    }
    return EvalConfig(**{**settings, **overrides})
