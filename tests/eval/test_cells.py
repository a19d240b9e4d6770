"""One cell of the evaluation: a real run, its metrics read from its real SQLite log; an
exploding task is an error cell, never the end of the evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from execgraph.eval import cells, metrics, report, suite
from execgraph.eval.ablations import BASELINE
from execgraph.eval.cells import Cell, run_cell
from execgraph.eval.runner import evaluate
from tests.eval.helpers import FIRST, SUITE, small


def test_a_cell_runs_and_its_metrics_come_from_its_event_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, list[Any]] = {}
    costs: list[dict[str, float]] = []
    load, declared = cells.load_events, cells.declared_costs

    def spy(store: Any, run_id: str) -> list[Any]:
        seen[run_id] = load(store, run_id)
        return seen[run_id]

    def spy_costs(tools: Any) -> dict[str, float]:
        costs.append(declared(tools))
        return costs[-1]

    monkeypatch.setattr(cells, "load_events", spy)
    monkeypatch.setattr(cells, "declared_costs", spy_costs)
    cell = Cell(FIRST.id, "react", BASELINE, seed=0)
    result = run_cell(cell)
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and list(seen) == [cell.run_id]
    events = seen[cell.run_id]
    assert events and {e.run_id for e in events} == {cell.run_id}
    assert any(str(e.type) == "tool.started" for e in events)
    # The metrics are exactly the log's, with the suite's verdict passed in.
    assert result.metrics == metrics.run_metrics(
        events,
        accepted=result.metrics.accepted,
        prices=suite.POLICY_PRICES,
        tool_costs=costs[0],
    )
    assert result.metrics.tool_calls == sum(1 for e in events if str(e.type) == "tool.started")
    assert isinstance(result.metrics.accepted, bool)
    # The run's prices reached the metrics: its model calls cost something.
    assert result.metrics.model_cost_usd > 0 and result.metrics.unpriced_model_calls == 0


def test_a_cell_with_a_fault_reports_whether_it_recovered() -> None:
    task = next(t for t in SUITE if t.faults)
    result = run_cell(Cell(task.id, "react", BASELINE, seed=0, fault=task.faults[0]))
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and result.metrics.fault == task.faults[0]
    assert isinstance(result.metrics.recovered, bool)


def test_an_exploding_task_is_an_error_cell_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare = cells.prepare

    def exploding(task: Any, workdir: Path, *, fault: str | None = None) -> Any:
        if task.id == FIRST.id and fault is None:
            raise RuntimeError(f"fixture broke under {workdir}")
        return prepare(task, workdir, fault=fault)

    monkeypatch.setattr(cells, "prepare", exploding)
    second = next(t for t in SUITE if t.id != FIRST.id)
    rep = evaluate(small(tasks=(FIRST.id, second.id), faults=False, seeds=1))
    by_task = {r.cell.task_id: r for r in rep.results if r.cell.arch == "react"}
    broken = by_task[FIRST.id]
    assert not broken.ok and broken.error_type == "RuntimeError"
    assert broken.error == "fixture broke under <cell>"  # no random temp path in the report
    data = report.to_json(rep)
    assert data["groups"][0]["metrics"]["errors"] == 1
    flagged = [c for c in data["cells"] if c["error_type"]]
    assert {c["task"] for c in flagged} == {FIRST.id} and len(flagged) == 2  # one per arch
    assert "RuntimeError: fixture broke under <cell>" in report.markdown(data)


def test_a_user_cancel_reaches_the_store_the_run_polls() -> None:
    task = next(t for t in SUITE if "user_cancels" in t.faults)
    result = run_cell(Cell(task.id, "react", BASELINE, seed=0, noise=0.0, fault="user_cancels"))
    assert result.ok, (result.error_type, result.error)
    assert result.metrics is not None and result.metrics.status == "CANCELLED"
    assert result.metrics.recovered is True
