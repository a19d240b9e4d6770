"""How often a run of read steps waits for the SQLite execution store's flush to disk.

A flush (a ``COMMIT`` at ``synchronous = FULL``) is an fsync under the store's lock: every
other run sharing the store waits behind it, and its thread then waits for the GIL. A run
of read steps needs two: its admission (the run's record starts) and its end (the
verdict and ``run.finished`` in one append). Its run lease is not flushed on its own: the
admission's flush writes it too, and a commit SQLite loses unflushed is lost only with
the host, which ends every worker of the file with it. Counted from SQLite's own trace of
the statements, so this guards the design without timing anything.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def look(i: int) -> str:
    """Look and say ok."""
    return "ok"


def _replies(steps: int) -> list[AIMessage]:
    calls = [
        AIMessage(content="", tool_calls=[{"name": "look", "args": {"i": i}, "id": f"c{i}"}])
        for i in range(steps)
    ]
    done = AIMessage(
        content="", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}]
    )
    return [*calls, done]


def _flushed_commits(trace: list[str]) -> list[int]:
    """Positions of the COMMITs made while the connection's level was FULL."""
    full, flushed = True, []  # the store opens at FULL
    for i, sql in enumerate(trace):
        words = " ".join(sql.split()).upper()
        if words.startswith("PRAGMA SYNCHRONOUS ="):
            full = words.endswith("FULL")
        elif words == "COMMIT" and full:
            flushed.append(i)
    return flushed


def test_a_run_of_read_steps_flushes_the_store_twice(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    trace: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(trace.append)  # sqlite3's own hook: every statement run
    steps = 3
    app = build_graph(
        "react",
        model=ScriptedChatModel(_replies(steps)),
        tools=[look],
        store=store,
        home=tmp_path,
    )
    task = {
        "task": {
            "goal": "look",
            "success_checks": [{"kind": "tool_succeeded", "target": "look"}],
        }
    }
    try:
        out = app.invoke(task, {"configurable": {"thread_id": "run-1"}})
        assert out["status"] == "COMPLETED"
        lease = next(i for i, sql in enumerate(trace) if "execgraph-run:" in sql or "locks" in sql)
        flushed = _flushed_commits(trace)
        assert len(flushed) == 2, [trace[i - 3 : i + 1] for i in flushed]
        assert flushed[0] > lease  # the admission's flush comes after the lease, writing it too
        logged = [e.type.value for e in store.events("run-1")]
        events = [t for t in logged if t != "state.checkpointed"]  # logged as the run ends
        assert events[-2:] == ["verifier.verdict", "run.finished"]
    finally:
        store.close()
