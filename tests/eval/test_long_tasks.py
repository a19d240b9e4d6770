"""The long class: 30 to 100 decisions over many documents, paused for approval mid-run,
and what the whole transcript costs against the projection on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.eval.cells import Cell, run_cell
from execgraph.eval.suite import SUITE, prepare, task_def
from execgraph.eval.tasks.long_horizon import LEDGER_PAGES

LONG = [t for t in SUITE if t.task_class == "long_horizon"]


def test_the_long_tasks_need_about_thirty_decisions_or_more() -> None:
    assert len(LONG) >= 2
    for task in LONG:
        assert len(task_def(task).script.steps) + 1 >= 29, task.id  # its calls and a finish


@pytest.mark.timeout(300)
@pytest.mark.parametrize("arch", ["react", "workflow", "hybrid"])
def test_the_oracle_follows_the_ledger_through_a_pause_and_is_accepted(arch: str) -> None:
    result = run_cell(Cell("ledger-chain", arch, noise=0.0, person="prompt"))
    m = result.metrics
    assert m is not None, result.error
    assert m.accepted and m.status == "COMPLETED"
    assert 30 <= m.decisions <= 100
    assert m.approvals == 2  # paused twice for a person: half-way and at the end
    assert m.tool_calls == LEDGER_PAGES + 3  # the start page, every page, two writes


@pytest.mark.timeout(300)
def test_the_whole_transcript_costs_more_per_decision_on_a_long_task() -> None:
    """Same decisions (the policy's draws and memory do not depend on the context), more
    input per decision and so more cost, when every turn carries the whole transcript."""
    for seed in range(2):
        base = run_cell(Cell("ledger-chain", "react", "baseline", seed, person="prompt"))
        full = run_cell(Cell("ledger-chain", "react", "full_history", seed, person="prompt"))
        assert base.metrics is not None and full.metrics is not None
        b, f = base.metrics, full.metrics
        assert f.decisions == b.decisions and f.accepted == b.accepted
        assert f.input_tokens / f.decisions > 1.3 * (b.input_tokens / b.decisions)
        assert f.model_cost_usd > b.model_cost_usd


def test_the_ledger_checker_wants_both_balances(tmp_path: Path) -> None:
    p = prepare(task_def("ledger-chain").task, tmp_path)
    (p.workspace / "total.md").write_text("final balance: 1\n")
    assert not p.accept({"messages": [], "output": "1"})
    assert p.settings["max_replans"] >= LEDGER_PAGES  # a replan per link
    p.close()
