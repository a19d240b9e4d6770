"""A run ended with Temporal's own tools is shown as what happened to it.

``temporal workflow cancel`` on a run waiting for an approval: the run ends CANCELLED
in execgraph's records (log and checkpoint) and Temporal shows the workflow Canceled.
``temporal workflow terminate``: ``execgraph status`` says TERMINATED and why, offers
nothing to approve, and ``execgraph approve`` says the run has nothing pending.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus

from execgraph.demo.build import demo_task
from execgraph.engines.embedded.foreign import read_home_state
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalRuns
from execgraph.engines.temporal.dev_server import temporal_cli
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.adversarial.trust_helpers import raw_cli, worker_thread
from tests.support.temporal_runs import demo_graphs

pytestmark = pytest.mark.timeout(180)


async def _waiting(address: str, queue: str, rid: str) -> TemporalRuns:
    runs = await TemporalRuns.connect(address, task_queue=queue)
    await runs.start(RunSpec(rid, demo_task()))
    for _ in range(600):
        if (await runs.status(rid)).waiting:
            return runs
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {rid} never paused")


def _temporal(address: str, *args: str) -> None:
    subprocess.run([temporal_cli(), "workflow", *args, "--address", address],
                   check=True, capture_output=True, timeout=60)  # fmt: skip


def _described(address: str, queue: str, rid: str) -> Any:
    async def go() -> Any:
        runs = await TemporalRuns.connect(address, task_queue=queue)
        for _ in range(300):
            found = await runs.client.get_workflow_handle(rid).describe()
            if found.status != WorkflowExecutionStatus.RUNNING:
                return found.status
            await asyncio.sleep(0.1)
        return found.status

    return asyncio.run(go())


def test_temporal_workflow_cancel_is_a_cancel_everywhere(
    temporal_address: str, tmp_path: Path
) -> None:
    rid = f"tc-{uuid.uuid4().hex[:6]}"
    with worker_thread(temporal_address, demo_graphs(tmp_path)) as queue:
        asyncio.run(_waiting(temporal_address, queue, rid))
        _temporal(temporal_address, "cancel", "-w", rid)
        described = _described(temporal_address, queue, rid)
        flags = ["--engine", "temporal", "--address", temporal_address, "--task-queue", queue]
        code, shown = raw_cli("status", rid, *flags)
    assert described == WorkflowExecutionStatus.CANCELED
    assert code == 0 and "status: CANCELLED" in shown, shown
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        finished = [e.payload for e in store.events(rid) if e.type == "run.finished"]
    assert finished[-1]["status"] == "CANCELLED"
    assert read_home_state(Home(tmp_path), rid).values["status"] == "CANCELLED"


def test_temporal_workflow_terminate_is_shown_and_offers_nothing(
    temporal_address: str, tmp_path: Path
) -> None:
    rid = f"tt-{uuid.uuid4().hex[:6]}"
    with worker_thread(temporal_address, demo_graphs(tmp_path)) as queue:
        asyncio.run(_waiting(temporal_address, queue, rid))
        _temporal(temporal_address, "terminate", "-w", rid, "--reason", "operator said so")
        flags = ["--engine", "temporal", "--address", temporal_address, "--task-queue", queue]
        code, shown = raw_cli("status", rid, *flags)
        approved_code, approved = raw_cli("approve", rid, *flags)
        _, listed = raw_cli("runs", *flags)
    assert code == 0, shown
    assert "status: TERMINATED" in shown and "operator said so" in shown, shown
    assert "waiting for" not in shown and "execgraph approve" not in shown, shown
    assert approved_code == 2, approved
    assert "has no pending approval (status TERMINATED)" in approved, approved
    assert "TERMINATED" in listed
