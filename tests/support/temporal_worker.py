"""A Temporal worker process for the kill harness: the ledger workload on shared PostgreSQL.

``python -m tests.support.temporal_worker ADDRESS QUEUE DSN BASE`` connects to Temporal,
opens the execution store and the checkpoints on ``DSN`` once, and advances runs of the
torture's ledger workload (:mod:`tests.reliability.crash_worker`: a probed ledger append
and a probe-less transfer, both counted in the world by the tools themselves) under the
run's architecture, each run in ``BASE/<run id>/workspace``. While a tool runs (it waits up
to 0.1 s before its effect, a window to be killed in), a file
``BASE/busy/<pid>-<key>`` exists, so the harness can kill a worker in the middle of one.
It prints ``{"ready": <pid>}`` once it polls its task queue.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

from temporalio.client import Client

from execgraph.engines.temporal.messages import RunSpec
from execgraph.engines.temporal.worker import make_worker
from execgraph.graph import build_graph
from execgraph.persistence.postgres import open_database
from execgraph.state.compiled import RunGraph
from execgraph.tools import AdapterOutput, InvokeContext, ToolSpec
from tests.reliability.crash_worker import SECRET, ledger_model, ledger_tools

__all__ = ["HEARTBEAT_S", "graphs_on"]

_BEFORE_EFFECT_S = 0.1

HEARTBEAT_S = 1.0
"""How often an advance heartbeats here (the harness's workflows time out after 3 s)."""


def _marked(spec: ToolSpec, busy: Path) -> ToolSpec:
    """``spec`` with a marker file present while it runs."""
    inner = spec.run

    def run(args: Any, ctx: InvokeContext) -> AdapterOutput:
        mark = busy / f"{os.getpid()}-{ctx.idempotency_key.replace(':', '_')}"
        mark.touch()
        try:
            time.sleep(random.uniform(0.0, _BEFORE_EFFECT_S))  # a window to be killed in
            return inner(args, ctx)
        finally:
            mark.unlink(missing_ok=True)

    return spec.with_(run=run)


def graphs_on(dsn: str, base: Path) -> Any:
    """``graph_for``: each run's ledger graph on the shared store and checkpoints."""
    store, saver = open_database(dsn)
    busy = base / "busy"
    busy.mkdir(parents=True, exist_ok=True)
    built: dict[str, RunGraph] = {}
    lock = threading.Lock()

    def graph_for(spec: RunSpec) -> RunGraph:
        with lock:
            if spec.run_id not in built:
                world = base / spec.run_id / "workspace"
                world.mkdir(parents=True, exist_ok=True)
                built[spec.run_id] = build_graph(
                    spec.arch,
                    model=ledger_model(spec.arch),
                    tools=[_marked(t, busy) for t in ledger_tools(world)],
                    store=store,
                    checkpointer=saver,
                    home=base / "home",
                    workspace=world,
                    approval_secret=SECRET,
                    history_turns=50,
                )
            return built[spec.run_id]

    return graph_for


async def _main(address: str, queue: str, dsn: str, base: Path) -> None:
    client = await Client.connect(address)
    worker = make_worker(client, queue, graphs_on(dsn, base), heartbeat_s=HEARTBEAT_S)
    async with worker:
        print(json.dumps({"ready": os.getpid()}), flush=True)
        await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    address_, queue_, dsn_, base_ = sys.argv[1:5]
    asyncio.run(_main(address_, queue_, dsn_, Path(base_)))
