"""Runs on a real Temporal server for the tests: an in-process worker and a tool to cancel.

:func:`worker_running` runs one worker (``make_worker``) in this process for the body of an
``async with``, :func:`worker_on_thread` for the body of a ``with`` (on a thread and event
loop of its own, so a synchronous test drives the engine); :func:`waiting_graphs` builds,
per run, a react graph whose scripted model calls ``wait_for_cancel`` once and then
finishes. The tool marks ``started`` in its world, then waits on its call's cancel signal
(bounded) and writes ``saw-cancel`` when it fires, so a test sees that a Temporal cancel
reached the running tool, not just the workflow.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from execgraph.demo.register import register_demo
from execgraph.engines.graphs import Graphs
from execgraph.engines.temporal import RunSpec, RunView, SharedGraphs, TemporalRuns, make_worker
from execgraph.graph import build_graph
from execgraph.state.compiled import RunGraph
from execgraph.testing import ScriptedChatModel
from execgraph.tools import InvokeContext, tool_spec

__all__ = [
    "REPO",
    "asking_graphs",
    "demo_graphs",
    "in_another_process",
    "until",
    "waiting_graphs",
    "worker_on_thread",
    "worker_running",
]

REPO = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def worker_running(
    runs: TemporalRuns, graph_for: Callable[[RunSpec], RunGraph]
) -> AsyncIterator[None]:
    """One worker of ``runs``' task queue, in this process, while the block runs."""
    async with make_worker(runs.client, runs.task_queue, graph_for, heartbeat_s=0.5):
        yield


def demo_graphs(home: Path) -> SharedGraphs:
    """``graph_for`` of a worker serving only the demo's tool set, under ``home``."""
    return SharedGraphs(register_demo(Graphs()), home=home)


async def until(
    runs: TemporalRuns, run_id: str, wanted: Callable[[RunView], bool], timeout_s: float = 60.0
) -> RunView:
    """Poll the run's status until ``wanted`` holds (bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        view = await runs.status(run_id)
        if wanted(view):
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} never got there: {view}")
        await asyncio.sleep(0.05)


def in_another_process(code: str) -> subprocess.CompletedProcess[str]:
    """Run Python ``code`` in a new process (with this repository importable)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def _decide(messages: list[BaseMessage]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        call = {"name": "finish", "args": {"output": "waited"}, "id": "finish"}
    else:
        call = {"name": "wait_for_cancel", "args": {}, "id": "wait"}
    return AIMessage("", tool_calls=[call])


def waiting_graphs(base: Path) -> Callable[[RunSpec], RunGraph]:
    """``graph_for``: each run a react graph over ``wait_for_cancel`` in ``base/<run>``."""
    built: dict[str, RunGraph] = {}

    def graph_for(spec: RunSpec) -> RunGraph:
        if spec.run_id not in built:
            built[spec.run_id] = _waiting_graph(base, spec)
        return built[spec.run_id]

    return graph_for


def _waiting_graph(base: Path, spec: RunSpec) -> RunGraph:
    world = base / spec.run_id
    world.mkdir(parents=True, exist_ok=True)

    @tool_spec(effect="read", timeout_s=120)
    def wait_for_cancel(ctx: InvokeContext) -> str:
        """Wait until this call is cancelled (at most 60 s)."""
        (world / "started").touch()
        if ctx.cancel.wait(60.0):
            (world / "saw-cancel").touch()
            return "cancelled"
        return "never cancelled"

    model: Any = ScriptedChatModel([_decide] * 20)
    return build_graph(
        spec.arch, model=model, tools=[wait_for_cancel], home=base / "home", workspace=world
    )


def _ask_then_finish(messages: list[BaseMessage]) -> AIMessage:
    """Ask which city; note the answer with the tool; then finish with it."""
    said = [str(m.content) for m in messages if "The user answered:" in str(m.content)]
    if any("noted " in str(m.content) for m in messages if m.type == "tool"):
        answer = said[-1].split("The user answered:", 1)[1].strip()
        call = {"name": "finish", "args": {"output": f"going to {answer}"}, "id": "finish"}
    elif said:
        answer = said[-1].split("The user answered:", 1)[1].strip()
        call = {"name": "note_city", "args": {"city": answer}, "id": "note"}
    else:
        call = {"name": "ask_user", "args": {"question": "Which city?"}, "id": "ask"}
    return AIMessage("", tool_calls=[call])


@tool_spec(effect="read")
def note_city(city: str) -> str:
    """Note the city the user chose."""
    return f"noted {city}"


def asking_graphs(base: Path) -> Callable[[RunSpec], RunGraph]:
    """``graph_for``: each run asks the user one question, notes the answer with a tool,
    then finishes with it."""
    built: dict[str, RunGraph] = {}

    def graph_for(spec: RunSpec) -> RunGraph:
        if spec.run_id not in built:
            model: Any = ScriptedChatModel([_ask_then_finish] * 10)
            built[spec.run_id] = build_graph(
                spec.arch, model=model, tools=[note_city], home=base / "home", workspace=base / "ws"
            )
        return built[spec.run_id]

    return graph_for


@contextmanager
def worker_on_thread(
    address: str,
    prefix: str,
    graphs: Graphs,
    *,
    heartbeat_s: float = 0.5,
    namespace: str = "default",
) -> Iterator[str]:
    """A new task queue (in ``namespace``) served by one worker on a thread of its own
    while the body runs; yields the queue's name."""
    from temporalio.client import Client

    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready = threading.Event()

    async def serve() -> None:
        client = await Client.connect(address, namespace=namespace)
        async with make_worker(client, name, graphs, heartbeat_s=heartbeat_s):
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60), "the worker never started"
    try:
        yield name
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
        if not thread.is_alive():
            loop.close()
