"""The seed's fault-injection matrix (section 15.2): every fault under every architecture.

Each cell runs on real SQLite with a scripted model and fake tools that count their own
executions; :func:`tests.reliability.matrix.check_cell` asserts the final status, real
executions, per-kind budget charges, a complete and ordered event log, no effect
committed twice, and no execution without an ``allow`` verdict. The scenarios and the
expected status per cell (with the reason where an architecture differs) live in
:mod:`tests.reliability.scenarios`; ``python -m tests.reliability.matrix --markdown``
prints the same matrix as a table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.state.events import EventType, make_event
from tests.reliability.matrix import ARCHS, FAULTS, CellReport, log_problems, render, run_cell
from tests.reliability.replies import call, calls, finish, hybrid, lookup, save
from tests.reliability.scenarios import STAGES, Cell


def _params() -> list[object]:
    return [pytest.param(fault, arch, id=f"{fault}-{arch}") for fault in FAULTS for arch in ARCHS]


@pytest.mark.parametrize(("fault", "arch"), _params())
def test_fault_cell(tmp_path: Path, fault: str, arch: str) -> None:
    report = run_cell(FAULTS[fault](arch), tmp_path)
    assert report.problems == [], f"{fault} x {arch}: {report.problems}"
    assert report.unauthorized == 0


def test_matrix_covers_every_seed_fault_under_every_architecture() -> None:
    assert set(ARCHS) == {"workflow", "react", "plan_execute", "hybrid"}
    seed = {
        "illegal_output",
        "unknown_tool",
        "schema_violation",
        "permission_denied",
        "read_timeout",
        "write_lost_probe",
        "write_lost_no_probe",
        "prompt_injection",
        "no_progress",
        "budget_model_calls",
        "budget_tool_calls",
        "verification_fails",
        "user_cancels",
    }
    assert set(FAULTS) == seed
    for fault, build in FAULTS.items():
        statuses = {arch: build(arch).status for arch in ARCHS}
        for arch, status in statuses.items():
            # every difference between architectures is explained in the scenario
            if status != statuses["react"]:
                assert build(arch).why, f"{fault} x {arch} differs without a reason"


def test_render_prints_markdown_and_the_unauthorized_count() -> None:
    reports = [
        CellReport("unknown_tool", "react", "COMPLETED"),
        CellReport("unknown_tool", "hybrid", "FAILED", ["FAILED (expected COMPLETED)"], 1),
    ]
    text = render(reports, markdown=True)
    assert text.splitlines()[0] == "| fault | workflow | react | plan_execute | hybrid |"
    assert "| unknown_tool | - | PASS COMPLETED | - | FAIL FAILED (expected COMPLETED) |" in text
    assert text.splitlines()[-1] == "unauthorized executions = 1"


def test_the_log_checker_catches_missing_duplicate_and_misordered_events() -> None:
    def log(*types: EventType, call: str = "c1") -> list[object]:
        return [make_event(t, "r", call_id=call, seq=i) for i, t in enumerate(types)]

    req, res, start, done = (
        EventType.TOOL_REQUESTED,
        EventType.TOOL_RESOLVED,
        EventType.TOOL_STARTED,
        EventType.TOOL_COMPLETED,
    )
    assert log_problems({"c1": log(req, res, start, done)}, {"c1": {}}) == []
    assert log_problems({"c1": log(req, res)}, {"c1": {}}) == ["c1: 0 tool.completed events"]
    assert "2 tool.completed" in log_problems({"c1": log(req, done, done)}, {"c1": {}})[0]
    assert (
        "out of pipeline order" in log_problems({"c1": log(req, start, res, done)}, {"c1": {}})[0]
    )
    assert "no result" in log_problems({"c1": log(req, res, done)}, {})[0]


def _off_phase(arch: str) -> Cell:
    """The model names a write tool inside a read-only stage / phase (not offered there)."""
    if arch == "workflow":
        replies = [save(), save("b"), finish()]  # stage "collect" offers only lookup
        return Cell("off_phase", arch, replies, "PARTIAL", {"save": 1}, 2, first=("save", "DENIED"))
    # collect offers reads only; a reply whose calls all belong to a later phase would move
    # the run there, so the write comes beside a read: the reply stays in collect
    replies = hybrid(
        [calls(("save", {"item": "a"}), ("lookup", {"item": "a"}))], [save("b")], finish()
    )
    executions = {"save": 1, "lookup": 1}
    return Cell("off_phase", arch, replies, "COMPLETED", executions, 3, first=("save", "DENIED"))


@pytest.mark.parametrize("arch", ["workflow", "hybrid"])
def test_a_tool_outside_the_current_stage_or_phase_is_refused(tmp_path: Path, arch: str) -> None:
    assert [s.tools for s in STAGES] == [("lookup",), ("save",)]
    report = run_cell(_off_phase(arch), tmp_path)
    assert report.problems == [], report.problems


def test_an_unoffered_tool_call_is_still_authorized_by_the_executor(tmp_path: Path) -> None:
    """The injection row's refusal comes from the contract, checked in the executor."""
    replies = [lookup(), call("send_email", {"item": "x"}), save(), finish()]
    cell = Cell(
        "contract",
        "react",
        replies,
        "COMPLETED",
        {"send_email": 0, "save": 1},
        3,
        first=("send_email", "DENIED"),
    )
    assert run_cell(cell, tmp_path).problems == []
