"""One cell of the evaluation: one run, in isolation, judged and measured from its log.

A cell is a task, an architecture, an ablation, a seed and at most one injected fault,
in a world whose services may be flaky (:mod:`execgraph.eval.tasks.flaky`) and with a
person who may be slow (:mod:`execgraph.eval.person`). :func:`run_cell` runs it in a
fresh temporary directory with its own SQLite execution store (on the person's simulated
clock) and an in-memory checkpointer, answers the run's interrupts with the suite's
scripted person, judges it with the suite's own acceptance checker and reads every metric
back from the run's event log. A cell that raises becomes an *error cell* (its exception
type and message, without the temporary path), never the end of the evaluation.

A cell's trajectory depends only on what the cell names (task, arch, ablation, seed,
noise, fault, flakiness, person), and its run id is derived from them, so a rerun logs
under the same id.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.metrics import RunMetrics, declared_costs, load_events, run_metrics
from execgraph.eval.person import SimulatedClockStore, SlowPerson
from execgraph.eval.suite import POLICY_PRICES, policy_model, prepare, task_def
from execgraph.eval.tasks.flaky import Flakiness, flaky_services
from execgraph.graph.build import build_graph
from execgraph.state.home import Home

__all__ = ["MAX_RESUMES", "Cell", "CellResult", "run_cell"]

MAX_RESUMES = 25
"""Interrupts answered per run at most: a run that keeps asking is a finding, not a hang."""


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
    flaky: float = 0.0
    """The world's services' outage rate per request (0: reliable)."""
    person: str = "prompt"
    """``"prompt"`` answers approvals at once; ``"slow"`` after a seeded delay, on the
    store's simulated clock, some only after they expired."""
    temperature: float | None = None
    """The sampling temperature given to a ``model`` (None: the provider's default)."""

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


def _drive(
    graph: Any,
    prepared: Any,
    run_id: str,
    person: SlowPerson | None,
    store: SimulatedClockStore,
) -> Mapping[str, Any]:
    """Invoke, then answer every interrupt with the scripted person (after the slow
    person's delay, on the store's clock), at most MAX_RESUMES."""
    config = {"configurable": {"thread_id": run_id}}
    values: Mapping[str, Any] = graph.invoke({"task": prepared.task}, config)
    for _ in range(MAX_RESUMES):
        interrupts = values.get("__interrupt__")
        if not interrupts:
            break
        if person is not None:
            for item in interrupts:
                person.answer_late(store, item.value)
        answers = {item.id: prepared.answer(item.value) for item in interrupts}
        values = graph.invoke(Command(resume=answers), config)
    return values


def _model(cell: Cell) -> Any:
    """The cell's ``provider:model`` chat model, at its temperature (None: the suite's)."""
    if cell.model is None:
        return None
    from execgraph.nodes.model.select import resolve_model

    extra = {} if cell.temperature is None else {"temperature": cell.temperature}
    return resolve_model(cell.model, **extra)


def run_cell(cell: Cell) -> CellResult:
    """Run one cell in isolation and read its metrics from its event log.

    Any exception (from the suite, the graph or the metrics) is returned as an error cell
    with the exception's type and message; the temporary directory is always removed.
    """
    workdir = Path(tempfile.mkdtemp(prefix="execgraph-eval-"))
    prepared: Any = None
    store: SimulatedClockStore | None = None
    draws = f"{cell.seed}:{cell.task_id}"
    try:
        task = task_def(cell.task_id).task
        with flaky_services(Flakiness(cell.flaky, draws) if cell.flaky > 0 else None):
            prepared = prepare(task, workdir, fault=cell.fault)
        # Where the embedded store would be, and handed to the scripted person: a cancel
        # (user_cancels) must reach the store the run polls.
        store = SimulatedClockStore(Home(workdir / "home").exec_db)
        prepared.store = store
        person = SlowPerson(draws) if cell.person == "slow" else None
        model: Any = _model(cell) or policy_model(
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
            **{**prepared.settings, **ABLATIONS[cell.ablation]},
        )
        values = _drive(graph, prepared, cell.run_id, person, store)
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
