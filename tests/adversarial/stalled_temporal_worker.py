"""A Temporal worker process for the stalled-worker torture (``python -m
tests.adversarial.stalled_temporal_worker ADDRESS QUEUE HOME``).

It serves one tool set, ``ledger``: ``post(entry)`` appends the entry to
``HOME/ledger.jsonl`` under the call's idempotency key — a ledger that refuses a key it
already booked, as a payment API does (each refusal is a line of ``refused.jsonl``, so
the torture sees a stalled owner's late attempt); before that, the tool checks its
fencing token (``ctx.check_fence()``), so a stale owner is refused before the ledger
(a ``"fenced": true`` line). While ``post`` runs, the file
``HOME/busy/<pid>`` exists, and it lingers a moment before its effect, so the torture can
stop the worker inside a tool. The model posts ``e0`` … ``e3``, then finishes. Leases
are short here (3 s), so a stopped worker's run is taken over within seconds. It prints
``{"ready": <pid>}`` once it polls its task queue.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import execgraph.nodes.executor.record_lease as record_lease
import execgraph.persistence.run_lease as run_lease
from execgraph.engines.graphs import Graphs
from execgraph.engines.temporal import SharedGraphs, make_worker
from execgraph.state.errors import FencedOut
from execgraph.testing import ScriptedChatModel
from execgraph.tools import AdapterOutput, InvokeContext, tool_spec

__all__ = ["ENTRIES", "HOLD_S", "LEASE_S", "ledger_tools"]

LEASE_S = 3.0
ENTRIES = 4
HOLD_S = 0.4  # inside the tool, before its effect: a window to be stopped in


def ledger_tools(home: Path) -> Any:
    """``post`` over ``home``'s ledger (a function of the run's workspace)."""
    ledger, refused, busy = home / "ledger.jsonl", home / "refused.jsonl", home / "busy"

    def booked(key: str) -> bool:
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        return any(json.loads(line)["key"] == key for line in lines)

    def probe(args: Any, ctx: InvokeContext) -> AdapterOutput:
        return AdapterOutput(committed=booked(ctx.idempotency_key))

    # idempotent: the ledger books a key once, so a worker that took the post over from a
    # stalled owner may post it again
    @tool_spec(
        name="post", effect="write", version="1.0.0", reconcile=probe, idempotent=True, retry=None
    )
    def post(entry: str, ctx: InvokeContext) -> str:
        """Book ``entry`` in the ledger (once per idempotency key)."""
        mark = busy / str(os.getpid())
        busy.mkdir(exist_ok=True)
        mark.write_text(entry)
        try:
            time.sleep(HOLD_S)
            with open(home / "ledger.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                line = {"key": ctx.idempotency_key, "entry": entry, "pid": os.getpid()}
                try:
                    ctx.check_fence()  # a stale owner acts on nothing
                except FencedOut:
                    with refused.open("a") as fh:
                        fh.write(json.dumps({**line, "fenced": True}) + "\n")
                    raise
                target = refused if booked(ctx.idempotency_key) else ledger
                with target.open("a") as fh:
                    fh.write(json.dumps(line) + "\n")
            return f"posted {entry}"
        finally:
            mark.unlink(missing_ok=True)

    return lambda workspace: [post]


def _next_post(messages: list[Any]) -> Any:
    from langchain_core.messages import AIMessage

    done = sum(1 for m in messages if m.type == "tool")
    if done >= ENTRIES:
        return AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "posted"},
                                          "id": "f"}])  # fmt: skip
    call = {"name": "post", "args": {"entry": f"e{done}"}, "id": f"p{done}"}
    return AIMessage("", tool_calls=[call])


async def _main(address: str, queue: str, home: Path) -> None:
    from temporalio.client import Client

    run_lease.RUN_LEASE_S, run_lease.RENEW_EVERY_S = LEASE_S, LEASE_S / 3
    record_lease.LEASE_S, record_lease.RENEW_EVERY_S = LEASE_S, LEASE_S / 3
    graphs = Graphs()
    graphs.add_tools("ledger", ledger_tools(home))
    graphs.add_model("poster", lambda: ScriptedChatModel([_next_post] * 40))
    client = await Client.connect(address)
    async with make_worker(client, queue, SharedGraphs(graphs, home=home), heartbeat_s=0.3):
        print(json.dumps({"ready": os.getpid()}), flush=True)
        await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
