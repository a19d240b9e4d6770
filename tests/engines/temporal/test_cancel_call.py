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

from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalEngine, make_worker
from execgraph.state.errors import UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.temporal_runs import waiting_graphs

pytestmark = pytest.mark.timeout(180)

GUARD_S = 60.0  # a broken path fails the test instead of hanging it (not a timing claim)


@pytest.fixture
def queue(temporal_address: str, tmp_path: Path) -> Iterator[str]:
    """A task queue served by one worker (on a thread) whose runs wait to be cancelled."""
    name = f"cancel-call-{uuid.uuid4().hex[:8]}"
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready = threading.Event()

    async def serve() -> None:
        client = await Client.connect(temporal_address)
        async with make_worker(client, name, waiting_graphs(tmp_path), heartbeat_s=0.5):
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60), "the worker never started"
    yield name
    loop.call_soon_threadsafe(stop.set)
    thread.join(60)


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
