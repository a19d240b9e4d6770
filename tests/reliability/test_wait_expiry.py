"""A run nobody answers: its wait ends by its expiry policy when the run is next resumed
past the deadline (the store's clock), never before it."""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.demo.build import demo_task
from execgraph.demo.register import register_demo
from execgraph.engines.embedded import EmbeddedRuns
from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import RunSpec
from execgraph.engines.waits import waits_of
from execgraph.state.store.sqlite import SqliteExecutionStore


def test_resuming_a_run_past_its_approval_deadline_refuses_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = EmbeddedRuns(tmp_path, graphs=register_demo(Graphs()))
    paused = runs.start(RunSpec("x-1", demo_task()))
    [wait] = waits_of(paused)
    assert wait.kind == "approval" and wait.since is not None and wait.until is not None
    assert wait.until - wait.since == 24 * 3600  # the default deadline
    call_id = paused.interrupts[0]["value"]["call_id"]

    assert runs.resume("x-1").interrupts == paused.interrupts  # not expired: still waits

    real = SqliteExecutionStore.clock
    monkeypatch.setattr(SqliteExecutionStore, "clock", lambda self: real(self) + 25 * 3600)
    after = runs.resume("x-1")  # a day and an hour later, by the store's clock
    assert after.values is not None
    result = after.values["results"][call_id]
    assert result["status"] == "DENIED" and "expired unanswered" in result["error"]["message"]
    assert result["side_effect"]["attempted"] is False
    assert not (Path(paused.workspace) / "published" / "report.md").exists()
