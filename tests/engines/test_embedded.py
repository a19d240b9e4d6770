"""The embedded engine from Python: the same ``Runs`` the command line uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.demo.build import demo_task
from execgraph.demo.register import register_demo
from execgraph.engines import EmbeddedRuns, Graphs, RunSpec
from execgraph.engines.answers import approve, reject
from execgraph.state.errors import UsageError


def _runs(home: Path) -> EmbeddedRuns:
    return EmbeddedRuns(home, graphs=register_demo(Graphs()))


def test_a_run_started_here_is_answered_and_read_by_another_engine(tmp_path: Path) -> None:
    paused = _runs(tmp_path).start(RunSpec("e1", demo_task()))
    assert paused.waiting and paused.spec == RunSpec("e1", demo_task())
    later = _runs(tmp_path)  # another process would build the same from the home
    with pytest.raises(UsageError, match="answers name no pending interrupt"):
        later.answer("e1", {"not-pending": {"action": "approve"}})
    done = later.answer("e1", approve(later.status("e1"), approver="python"))
    assert done.status == "COMPLETED", done.error
    assert (tmp_path / "workspaces" / "e1" / "published" / "report.md").is_file()
    trace = later.trace("e1")
    assert trace.values["status"] == "COMPLETED" and trace.evidence
    assert "publish_report@1.0.0" in trace.tool_costs
    kinds = [e.type for e in later.events("e1")]
    assert [k for k in kinds if k != "state.checkpointed"][-1] == "run.finished"
    assert len(later.events("e1", after=3)) == len(trace.events) - 3
    assert later.replay("e1").same
    [row] = later.runs()
    assert (row.run_id, row.arch, row.status) == ("e1", "react", "COMPLETED")


def test_a_used_run_id_an_unknown_tool_set_and_a_bad_id_are_refused(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    runs.start(RunSpec("e2", demo_task()))
    with pytest.raises(UsageError, match="already exists"):
        runs.start(RunSpec("e2", demo_task()))
    with pytest.raises(UsageError, match="no tool set named 'shutil:rmtree'"):
        runs.start(RunSpec("e3", demo_task(), tools="shutil:rmtree"))
    with pytest.raises(UsageError, match="is not valid"):
        runs.start(RunSpec("../e4", demo_task()))
    assert not (tmp_path / "e4").exists()


def test_an_answerer_answers_each_pause_and_a_cancel_ends_a_paused_run(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    asked: list[str] = []

    def no_twice(view: object) -> dict[str, object] | None:
        asked.append(view.run_id)  # type: ignore[attr-defined]
        return reject(view, "not now", approver="python") if len(asked) == 1 else None  # type: ignore[arg-type]

    again = runs.start(RunSpec("e5", demo_task()), answerer=no_twice)
    assert again.waiting and len(asked) == 2  # the policy asked again after the no
    ended = runs.cancel("e5")
    assert ended.status == "CANCELLED" and not ended.waiting
    assert runs.cancel("e5").status == "CANCELLED"  # already ended: nothing runs
