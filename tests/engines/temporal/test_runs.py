"""Runs on a real Temporal dev server: pause, approve from elsewhere, reject, cancel.

Each test starts its own task queue and an in-process worker over the embedded SQLite
home of its tmp directory (the kill harness covers worker processes on PostgreSQL).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.worker import Replayer

from execgraph.demo.build import demo_task
from execgraph.engines.temporal import RunSpec, TemporalRuns
from execgraph.engines.temporal.worker import sandbox_runner
from execgraph.engines.temporal.workflow import ExecgraphRun
from execgraph.state.errors import StoreError, UsageError
from tests.support.temporal_runs import (
    asking_graphs,
    demo_graphs,
    in_another_process,
    until,
    waiting_graphs,
    worker_running,
)

pytestmark = pytest.mark.timeout(180)


def _waiting(view: Any) -> bool:
    return view.status == "WAITING"


async def _runs(address: str) -> TemporalRuns:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    return await TemporalRuns.connect(address, task_queue=queue, heartbeat_s=2.0)


def _published(home: Path, run_id: str) -> Path:
    return home / "workspaces" / run_id / "published" / "report.md"


def test_an_approval_from_another_process_completes_the_run(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        runs = await _runs(temporal_address)
        async with worker_running(runs, demo_graphs(tmp_path)):
            await runs.start(RunSpec("demo-1", task=demo_task()))
            paused = await until(runs, "demo-1", _waiting)
            # the worker runs on this loop: wait for the other process off it
            approver = await asyncio.to_thread(
                in_another_process,
                "import asyncio\n"
                "from execgraph.engines.temporal import TemporalRuns\n"
                "async def main():\n"
                f"    runs = await TemporalRuns.connect({temporal_address!r}, "
                f"task_queue={runs.task_queue!r})\n"
                "    view = await runs.approve('demo-1', approver='another process')\n"
                "    print(view.status)\n"
                "asyncio.run(main())\n"
                # temporalio/sdk-python#300: a client process may abort in interpreter
                # teardown (the core's threads outlive it); end it once it has answered
                "import os, sys; sys.stdout.flush(); os._exit(0)\n",
            )
            return paused, approver, await runs.result("demo-1")

    paused, approver, final = asyncio.run(scenario())
    (pending,) = paused.interrupts
    assert pending["value"]["kind"] == "approval"
    assert pending["value"]["tool"] == "publish_report"
    # the request carries the binding the approval is checked against on resume
    assert {"version", "args_hash", "target_state"} <= set(pending["value"])
    assert approver.returncode == 0, approver.stderr
    assert approver.stdout.strip() == "RUNNING"
    assert final.status == "COMPLETED", final
    assert _published(tmp_path, "demo-1").exists()


def test_a_rejection_is_told_to_the_model_and_the_call_never_runs(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        runs = await _runs(temporal_address)
        async with worker_running(runs, demo_graphs(tmp_path)):
            await runs.start(RunSpec("demo-2", task=demo_task()))
            first = await until(runs, "demo-2", _waiting)
            await runs.reject("demo-2", reason="not today")
            # the demo's policy asks again, as a new call: the run pauses once more
            again = await until(
                runs, "demo-2", lambda v: _waiting(v) and v.interrupts != first.interrupts
            )
            await runs.cancel("demo-2")
            return first, again, await runs.result("demo-2")

    first, again, final = asyncio.run(scenario())
    assert first.interrupts[0]["value"]["call_id"] != again.interrupts[0]["value"]["call_id"]
    assert final.status == "CANCELLED", final
    assert not _published(tmp_path, "demo-2").exists()


def test_answers_must_name_what_the_run_waits_for(temporal_address: str, tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        runs = await _runs(temporal_address)
        refused: list[str] = []
        async with worker_running(runs, demo_graphs(tmp_path)):
            await runs.start(RunSpec("demo-3", task=demo_task()))
            await until(runs, "demo-3", _waiting)
            for answers in ({"no-such-interrupt": {"action": "approve"}}, {}):
                try:
                    await runs.decide("demo-3", answers)
                except UsageError as exc:
                    refused.append(str(exc))
            await runs.approve("demo-3")
            try:  # answered already: nothing waits until the run pauses again
                await runs.approve("demo-3")
            except UsageError as exc:
                refused.append(str(exc))
            assert (await runs.result("demo-3")).status == "COMPLETED"
        return refused

    refused = asyncio.run(scenario())
    assert len(refused) == 3, refused
    assert "no-such-interrupt" in refused[0] and "pending" in refused[0]
    assert "none given" in refused[1]
    assert "no pending approval" in refused[2] or "not waiting" in refused[2]


def test_a_temporal_cancel_reaches_the_running_tool(temporal_address: str, tmp_path: Path) -> None:
    async def scenario() -> Any:
        runs = await _runs(temporal_address)
        async with worker_running(runs, waiting_graphs(tmp_path)):
            await runs.start(RunSpec("wait-1", task={"goal": "wait until cancelled"}))
            deadline = asyncio.get_running_loop().time() + 60
            while not (tmp_path / "wait-1" / "started").exists():
                assert asyncio.get_running_loop().time() < deadline, "the tool never started"
                await asyncio.sleep(0.02)
            await runs.cancel("wait-1")
            return await runs.result("wait-1")

    final = asyncio.run(scenario())
    assert (tmp_path / "wait-1" / "saw-cancel").exists()  # the tool's own cancel signal fired
    assert final.status == "CANCELLED", final


def test_a_cancel_while_waiting_refuses_the_pending_call(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> Any:
        runs = await _runs(temporal_address)
        async with worker_running(runs, demo_graphs(tmp_path)):
            await runs.start(RunSpec("demo-4", task=demo_task()))
            await until(runs, "demo-4", _waiting)
            await runs.cancel("demo-4")
            return await runs.result("demo-4")

    final = asyncio.run(scenario())
    assert final.status == "CANCELLED", final
    assert not _published(tmp_path, "demo-4").exists()


def test_a_run_id_runs_once(temporal_address: str, tmp_path: Path) -> None:
    async def scenario() -> str:
        runs = await _runs(temporal_address)
        await runs.start(RunSpec("once-1", task=demo_task()))
        try:
            await runs.start(RunSpec("once-1", task=demo_task()))
        except UsageError as exc:
            return str(exc)
        finally:
            await runs.client.get_workflow_handle("once-1").terminate()
        return "started twice"

    assert "once-1" in asyncio.run(scenario())


def test_a_tools_reference_no_worker_can_import_fails_the_run_at_once(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> Any:
        runs = await _runs(temporal_address)
        async with worker_running(runs, demo_graphs(tmp_path)):
            spec = RunSpec("bad-1", task={"goal": "x"}, tools="no_such_module:TOOLS")
            await runs.start(spec)
            return await asyncio.wait_for(runs.result("bad-1"), 60)

    final = asyncio.run(scenario())
    assert final.status == "FAILED"
    assert "no_such_module" in final.error


def test_the_workflow_replays_its_recorded_histories(temporal_address: str, tmp_path: Path) -> None:
    """Temporal replays a workflow from its history on any worker: the code must make the
    same decisions again (no hidden clock, randomness or I/O), through a rejection, an
    approval and a cancel."""

    async def scenario() -> None:
        runs = await _runs(temporal_address)
        async with worker_running(runs, demo_graphs(tmp_path)):
            await runs.start(RunSpec("demo-5", task=demo_task()))
            first = await until(runs, "demo-5", _waiting)
            await runs.reject("demo-5", reason="once more")
            await until(runs, "demo-5", lambda v: _waiting(v) and v.interrupts != first.interrupts)
            await runs.approve("demo-5")
            assert (await runs.result("demo-5")).status == "COMPLETED"
            await runs.start(RunSpec("demo-6", task=demo_task()))
            await until(runs, "demo-6", _waiting)
            await runs.cancel("demo-6")
            assert (await runs.result("demo-6")).status == "CANCELLED"
        replayer = Replayer(workflows=[ExecgraphRun], workflow_runner=sandbox_runner())
        for run_id in ("demo-5", "demo-6"):
            history = await runs.client.get_workflow_handle(run_id).fetch_history()
            replayed = await replayer.replay_workflow(history)
            assert replayed.replay_failure is None, replayed.replay_failure

    asyncio.run(scenario())


def test_a_busy_store_is_tried_again_and_the_run_goes_on(
    temporal_address: str, tmp_path: Path
) -> None:
    """A ``StoreError`` (another worker still holds the run's lease, a database briefly
    away) fails only that attempt: Temporal runs the advance again after a backoff."""
    graphs = demo_graphs(tmp_path)
    attempts: list[str] = []

    def flaky(spec: RunSpec) -> Any:
        attempts.append(spec.run_id)
        if len(attempts) <= 2:
            raise StoreError("the execution store is busy (test)")
        return graphs(spec)

    async def scenario() -> Any:
        runs = await _runs(temporal_address)
        async with worker_running(runs, flaky):
            await runs.start(RunSpec("busy-1", task=demo_task()))
            await until(runs, "busy-1", _waiting)
            await runs.approve("busy-1")
            return await runs.result("busy-1")

    final = asyncio.run(scenario())
    assert final.status == "COMPLETED", final
    assert len(attempts) == 4  # two refused attempts, then the first advance, the second


def test_a_question_is_answered_through_temporal(temporal_address: str, tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any, list[str]]:
        runs = await _runs(temporal_address)
        refused: list[str] = []
        async with worker_running(runs, asking_graphs(tmp_path)):
            await runs.start(RunSpec("ask-1", task={"goal": "pick a city"}))
            asked = await until(runs, "ask-1", _waiting)
            try:  # a question is not an approval
                await runs.approve("ask-1")
            except UsageError as exc:
                refused.append(str(exc))
            await runs.answer("ask-1", "Lisbon")
            final = await runs.result("ask-1")
            try:
                await runs.answer("ask-1", "Porto")
            except UsageError as exc:
                refused.append(str(exc))
            return asked, final, refused

    asked, final, refused = asyncio.run(scenario())
    assert asked.interrupts[0]["value"]["kind"] == "question"
    assert asked.interrupts[0]["value"]["question"] == "Which city?"
    assert final.status == "COMPLETED" and final.output == "going to Lisbon", final
    assert "no pending approval" in refused[0]
    assert "no pending question" in refused[1]
