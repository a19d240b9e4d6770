"""Cancel one call of a run on Temporal: a worker logs the call's cancel in the run's
store, the worker running the call sees it, and the run goes on to its end."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from execgraph.demo.build import demo_task
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalEngine, make_worker
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.temporal_runs import demo_graphs, waiting_graphs, worker_on_thread

pytestmark = pytest.mark.timeout(180)

GUARD_S = 60.0  # a broken path fails the test instead of hanging it (not a timing claim)


@pytest.fixture
def queue(temporal_address: str, tmp_path: Path) -> Iterator[str]:
    """A task queue served by one worker (on a thread) whose runs wait to be cancelled."""
    with worker_on_thread(temporal_address, "cancel-call", waiting_graphs(tmp_path)) as name:
        yield name


def test_one_call_is_cancelled_on_temporal_and_the_run_goes_on(
    temporal_address: str, queue: str, tmp_path: Path
) -> None:
    ended: dict[str, Any] = {}

    def drive() -> None:
        engine = TemporalEngine(temporal_address, task_queue=queue)
        ended["view"] = engine.start(RunSpec("wc-1", {"goal": "wait for a while"}))

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    end = time.monotonic() + GUARD_S
    with SqliteExecutionStore(tmp_path / "home" / "exec.db") as store:
        while not (running := store.pending("wc-1")):
            assert time.monotonic() < end, "the call never started"
            time.sleep(0.05)
    call_id = running[0].call_id
    engine = TemporalEngine(temporal_address, task_queue=queue)
    with pytest.raises(UsageError, match="no call"):
        engine.cancel("wc-1", call_id="never-made")
    engine.cancel("wc-1", "enough", call_id=call_id)
    driver.join(GUARD_S)
    assert (tmp_path / "wc-1" / "saw-cancel").exists()  # the call's own signal fired
    final = engine.status("wc-1")
    assert final.status == "COMPLETED", final  # the run went on: not cancelled


def test_resuming_a_temporal_run_past_its_approval_deadline_refuses_the_call(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker reads the store's clock; a wait past its deadline is ended by its policy
    (the default: refused), one before it is not."""
    name = f"expiry-{uuid.uuid4().hex[:8]}"
    loop, stop, ready = asyncio.new_event_loop(), asyncio.Event(), threading.Event()

    async def serve() -> None:
        client = await Client.connect(temporal_address)
        async with make_worker(client, name, demo_graphs(tmp_path), heartbeat_s=0.5):
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(60), "the worker never started"
        engine = TemporalEngine(temporal_address, task_queue=name)
        paused = engine.start(RunSpec("te-x", demo_task()))
        call_id = paused.interrupts[0]["value"]["call_id"]
        with pytest.raises(UsageError, match="continued by its workers"):
            engine.resume("te-x")  # not expired: nothing to end
        real = SqliteExecutionStore.clock
        monkeypatch.setattr(SqliteExecutionStore, "clock", lambda self: real(self) + 25 * 3600)
        engine.resume("te-x")
        with SqliteExecutionStore(tmp_path / "exec.db") as store:
            [ended] = store.events("te-x", call_id=call_id, types=[EventType.TOOL_COMPLETED])
            assert ended.payload["status"] == "DENIED"
        assert not (tmp_path / "workspaces" / "te-x" / "published" / "report.md").exists()
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
