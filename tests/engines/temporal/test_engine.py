"""``TemporalEngine``: the same ``Runs`` as the embedded engine, over a real Temporal dev
server and a worker (here on a thread of this process, serving only the demo)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.demo.build import demo_task
from execgraph.engines.answers import approve
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalEngine, activities
from execgraph.state.errors import UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.temporal_runs import demo_graphs, worker_on_thread

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def queue(temporal_address: str, tmp_path: Path) -> Iterator[str]:
    """A task queue served by one worker on a thread of its own, while the test runs."""
    with worker_on_thread(temporal_address, "engine", demo_graphs(tmp_path)) as name:
        yield name


def test_a_run_is_started_answered_and_read_back_through_the_engine(
    temporal_address: str, queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    engine = TemporalEngine(
        temporal_address, task_queue=queue, watch=lambda mode, view: seen.append(view.status)
    )
    paused = engine.start(RunSpec("te-1", demo_task()))
    assert paused.waiting and seen[0] == "RUNNING"
    with pytest.raises(UsageError, match="answers name no pending interrupt"):
        engine.answer("te-1", {"nope": {"action": "approve"}})
    with pytest.raises(UsageError, match="continued by its workers"):
        engine.resume("te-1")
    done = engine.answer("te-1", approve(paused, approver="python"))
    assert done.status == "COMPLETED", done.error
    assert (tmp_path / "workspaces" / "te-1" / "published" / "report.md").is_file()

    monkeypatch.setattr(activities, "EVENTS_PER_LOOK", 7)  # many pages
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        logged = [e.event_id for e in store.events("te-1")]
    assert len(logged) > 7
    assert [e.event_id for e in engine.events("te-1")] == logged
    assert [e.event_id for e in engine.events("te-1", after=5)] == logged[5:]
    trace = engine.trace("te-1")
    assert [e.event_id for e in trace.events] == logged
    assert trace.values["status"] == "COMPLETED" and "publish_report@1.0.0" in trace.tool_costs
    assert engine.replay("te-1").same
    assert any(row.run_id == "te-1" and row.status == "COMPLETED" for row in engine.runs())


def test_an_auto_answerer_and_a_cancel(temporal_address: str, queue: str) -> None:
    engine = TemporalEngine(temporal_address, task_queue=queue)
    done = engine.start(RunSpec("te-2", demo_task()), answerer=lambda v: approve(v, None, "auto"))
    assert done.status == "COMPLETED" and engine.cancel("te-2").status == "COMPLETED"
    engine.start(RunSpec("te-3", demo_task()))
    assert engine.cancel("te-3").status == "CANCELLED"
    with pytest.raises(UsageError, match="Temporal knows no such run"):
        engine.status("te-ghost")
