"""Processes that open one home at the same moment, for the open-race test.

Each process of :func:`race` runs the same rounds. In a round every process opens a
*fresh* home (a new directory: the first processes make its files, tables and key
together) at one agreed instant, then the *busy* home (made before the race), and runs a
one-tool graph on each. Process 0 holds a write transaction on the busy home's two
databases for :data:`HOLD_S` from that instant (and opens only the fresh home), so the
others open the busy one while a writer has it. Opening is what ``build_graph`` does with
the embedded defaults: the execution store, the approval key, the checkpointer. A process
reports, per round, every error it met.

The instant is a wall-clock time every process spins towards (not a barrier's wake-up,
which spreads the processes over milliseconds): a file's first open is over within
milliseconds, so only processes released together meet inside it.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from multiprocessing.context import SpawnContext
from pathlib import Path
from typing import Any

__all__ = ["HOLD_S", "race"]

HOLD_S = 1.0  # how long process 0 holds the busy home's write transaction
_LEAD_S = 0.05  # from the round's start being agreed to the instant every process opens


def race(root: Path, processes: int, rounds: int, timeout_s: float) -> list[tuple[int, int, str]]:
    """Run the race; return ``(process, round, error)`` for every error met (none: passed)."""
    from multiprocessing import get_context

    from execgraph.state.home import Home

    made = _open_and_run(Home(root / "busy"))  # the busy home exists before the race
    if made:
        raise AssertionError(made)
    ctx: SpawnContext = get_context("spawn")
    barrier = ctx.Barrier(processes)
    start = ctx.Value("d", 0.0)
    queue = ctx.Queue()
    args = (str(root), rounds, barrier, start, queue)
    workers = [ctx.Process(target=_worker, args=(i, *args), daemon=True) for i in range(processes)]
    for worker in workers:
        worker.start()
    errors: list[tuple[int, int, str]] = []
    try:
        for _ in range(processes * rounds):
            errors.extend(queue.get(timeout=timeout_s))
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()
    return errors


def _worker(index: int, root: str, rounds: int, barrier: Any, start: Any, queue: Any) -> None:
    from execgraph.state.home import Home

    busy = Home(Path(root) / "busy")
    for round_ in range(rounds):
        fresh = Home(Path(root) / f"fresh-{round_}")
        barrier.wait()  # everyone is done with the last round
        holder = _hold(busy) if index == 0 else None
        if index == 0:
            start.value = time.time() + _LEAD_S
        barrier.wait()  # the busy home is held, and the instant agreed
        at = start.value
        while time.time() < at:
            pass
        errors = [_open_and_run(fresh)]
        if holder is None:
            errors.append(_open_and_run(busy))
        else:
            time.sleep(max(0.0, at + HOLD_S - time.time()))
            for conn in holder:
                conn.execute("COMMIT")
                conn.close()
        queue.put([(index, round_, error) for error in errors if error])


def _hold(home: Any) -> list[sqlite3.Connection]:
    """A write transaction, with a row written, on the home's two databases."""
    held = []
    for path, write in (
        (
            home.exec_db,
            "INSERT INTO approval_tokens (token_id, used_at) VALUES (hex(randomblob(8)), 0)",
        ),
        (home.checkpoints_db, "DELETE FROM writes WHERE thread_id = 'nobody'"),
    ):
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(write)
        held.append(conn)
    return held


def _open_and_run(home: Any) -> str:
    """Open the home as ``build_graph`` does (the execution store, the approval key, the
    checkpointer), then run a graph on it that calls one tool and finishes. Returns what
    went wrong, or an empty string."""
    from langchain_core.messages import AIMessage

    from execgraph.graph import build_graph
    from execgraph.persistence.saver import open_embedded_saver
    from execgraph.state.store.sqlite import SqliteExecutionStore
    from execgraph.testing import ScriptedChatModel
    from execgraph.tools import tool_spec

    @tool_spec(effect="read")
    def look(i: int) -> str:
        """Look at item i."""
        return f"item {i}"

    try:
        store = SqliteExecutionStore(home.exec_db)
        secret = home.secret()
        saver = open_embedded_saver(home.checkpoints_db)
    except Exception:
        return f"opening {home.root.name}: {traceback.format_exc()}"
    try:
        model = ScriptedChatModel(
            [
                AIMessage(content="", tool_calls=[{"name": "look", "args": {"i": 1}, "id": "c1"}]),
                AIMessage(
                    content="", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}]
                ),
            ]
        )
        graph = build_graph(
            "react", model=model, tools=[look], home=home.root,
            store=store, checkpointer=saver, approval_secret=secret,
        )  # fmt: skip
        thread = f"t-{time.time_ns()}"
        task = {"goal": "look", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}
        state = graph.invoke({"task": task}, {"configurable": {"thread_id": thread}})
        if state["status"] != "COMPLETED":
            return f"running on {home.root.name}: the run ended {state['status']}"
        return ""
    except Exception:
        return f"running on {home.root.name}: {traceback.format_exc()}"
    finally:
        store.close()
        saver.conn.close()
