"""``execgraph.replay`` over a run that ran on Temporal: the worker's store holds its
record, and the public replay reads it there as from any other store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from execgraph import build_graph, replay
from execgraph.demo.build import DEMO_STAGES, demo_task, demo_tools
from execgraph.demo.research import RESEARCH_CHECKS
from execgraph.engines.answers import approve
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalEngine
from tests.support.temporal_runs import demo_graphs, worker_on_thread

pytestmark = pytest.mark.timeout(180)


@contextmanager
def _worker(temporal_address: str, tmp_path: Path) -> Iterator[str]:
    """A task queue served by one worker on a thread of its own (the approval key set)."""
    with worker_on_thread(temporal_address, "replay", demo_graphs(tmp_path)) as name:
        yield name


def test_public_replay_of_a_temporal_run_from_the_workers_store(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", "tests-replay-approval-key")
    with _worker(temporal_address, tmp_path) as queue:
        _replay_on(temporal_address, queue, tmp_path)


def _replay_on(temporal_address: str, queue: str, tmp_path: Path) -> None:
    engine = TemporalEngine(temporal_address, task_queue=queue)
    paused = engine.start(RunSpec("tr-1", demo_task()))
    done = engine.answer("tr-1", approve(paused, approver="python"))
    assert done.status == "COMPLETED", done.error
    ws = tmp_path / "workspaces" / "tr-1"
    report = replay(
        "tr-1",
        tools=demo_tools(ws),
        store=tmp_path / "exec.db",
        arch=partial(build_graph, "react", stages=DEMO_STAGES),
        task=demo_task(),
        checks=RESEARCH_CHECKS,
        workspace=ws,
    )
    assert report.same, report.diff
    assert report.replayed_status == "COMPLETED"
    assert report.replies_used == report.recorded_model_calls > 0
    assert report.effects_replayed >= 2 and report.workspace_changes == []
    # The worker's own replay (what ``execgraph replay --engine temporal`` prints) agrees.
    remote = engine.replay("tr-1")
    assert remote.same and remote.replies_used == report.replies_used
