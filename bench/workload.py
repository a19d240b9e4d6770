"""The one scripted workload every framework runs, and the runners that time it.

A scripted model calls a no-op tool N times (each call's arguments differ, ``{"i": k}``, so
execgraph's loop guard sees progress) and then finishes. Every framework gets the same
``ScriptedChatModel``, the same kind of tool and a ``SqliteSaver`` on a file in a temp dir
(execgraph its embedded default, the ``SqliteSaver`` subclass ``build_graph`` opens when
given no checkpointer).
Each runs in the durability that makes it crash-safe (:func:`durability`), and ``invoke``
returns only once the last checkpoint (and, for execgraph, its execution store
transaction) is on disk: what we time is durable work.

Each model call records ``time.perf_counter()``; the gap between two model calls is the cost
of one tool step (tool call + checkpoints + the next model call's preamble).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

__all__ = [
    "EXECGRAPH",
    "EXECGRAPH_SYNC",
    "FRAMEWORKS",
    "RunRecord",
    "build_app",
    "db_bytes",
    "durability",
    "execgraph_task",
    "is_execgraph",
    "open_saver",
    "run_steps",
    "scripted_replies",
]

EXECGRAPH = "execgraph"
EXECGRAPH_SYNC = "execgraph_sync"
FRAMEWORKS = (
    EXECGRAPH,
    EXECGRAPH_SYNC,
    "create_agent",
    "create_react_agent",
    "create_agent_nocp",
    "langgraph_floor",
)
"""``execgraph_sync`` is execgraph run with ``durability="sync"`` instead of its default;
``create_agent_nocp`` is ``create_agent`` with no checkpointer at all; ``langgraph_floor``
one LangGraph node per step on the same checkpointer (:mod:`bench.floor_graph`)."""


def is_execgraph(framework: str) -> bool:
    """execgraph's graph, in either durability."""
    return framework in (EXECGRAPH, EXECGRAPH_SYNC)


THREAD = "bench-thread"


@tool_spec(effect="read")
def noop(i: int) -> str:
    """Do nothing and say ok."""
    return "ok"


@tool_spec(effect="irreversible")
def publish(doc: str) -> str:
    """Publish a document (needs approval: the run pauses before it)."""
    return "published"


@tool("noop")
def lc_noop(i: int) -> str:
    """Do nothing and say ok."""
    return "ok"


def tool_call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """One AI turn calling one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def finish_reply(framework: str) -> AIMessage:
    """The last turn: execgraph's ``finish`` decision, or a plain answer for LangGraph."""
    if is_execgraph(framework):
        return tool_call("finish", {"output": "done"}, "finish-0")
    return AIMessage(content="done")


def scripted_replies(
    framework: str,
    n: int,
    stamps: list[float] | None = None,
    *,
    pause: bool = False,
    prefix: str = "c",
) -> list[Any]:
    """N no-op tool calls, then finish (or, for execgraph with ``pause``, an approval pause).

    With ``stamps``, each reply is a callable that appends ``perf_counter()`` first.
    """
    replies: list[Any] = [tool_call("noop", {"i": k}, f"{prefix}{k}") for k in range(n)]
    if pause and is_execgraph(framework):
        replies.append(tool_call("publish", {"doc": "report.md"}, f"{prefix}-publish"))
    else:
        replies.append(finish_reply(framework))
    if stamps is None:
        return replies

    def stamped(reply: AIMessage) -> Callable[[list[BaseMessage]], AIMessage]:
        def call(_messages: list[BaseMessage]) -> AIMessage:
            stamps.append(time.perf_counter())
            return reply

        return call

    return [stamped(r) for r in replies]


def execgraph_task(n: int, tool_name: str = "noop") -> dict[str, Any]:
    """The execgraph task: budgets large enough for N steps, one check on evidence."""
    return {
        "task": {
            "goal": f"Call {tool_name} until told to stop.",
            "success_checks": [{"kind": "tool_succeeded", "target": tool_name}],
            "budgets": {"model_calls": n + 5, "tool_calls": n + 5},
        }
    }


def open_saver(path: Path) -> SqliteSaver:
    """A SqliteSaver on a file, WAL like execgraph's embedded default."""
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    return SqliteSaver(conn)


def build_app(
    framework: str,
    model: Any,
    directory: Path,
    *,
    saver: Any = None,
    store: Any = None,
    tools: list[Any] | None = None,
) -> Any:
    """Compile ``framework``'s agent over ``model`` with checkpoints under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    if framework != "create_agent_nocp" and saver is None and not is_execgraph(framework):
        saver = open_saver(directory / "checkpoints.db")
    if is_execgraph(framework):
        # No saver given: execgraph's embedded default, what build_graph gives a user
        # (a SqliteSaver on <home>/checkpoints.db, WAL, with integer channel versions).
        from execgraph.graph import build_graph
        from execgraph.state.store.sqlite import SqliteExecutionStore

        return build_graph(
            "react",
            model=model,
            tools=tools or [noop, publish],
            checkpointer=saver,
            store=store if store is not None else SqliteExecutionStore(directory / "exec.db"),
            home=directory,
            loop_threshold=10**9,
        )
    if framework in ("create_agent", "create_agent_nocp"):
        from langchain.agents import create_agent

        return create_agent(model, tools or [lc_noop], checkpointer=saver)
    if framework == "langgraph_floor":
        from bench.floor_graph import build_floor

        return build_floor(model, tools[0] if tools else lc_noop, saver)
    if framework == "create_react_agent":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from langgraph.prebuilt import create_react_agent

            return create_react_agent(model, tools or [lc_noop], checkpointer=saver)
    raise ValueError(f"unknown framework {framework!r}")


def first_input(framework: str, n: int, tool_name: str = "noop") -> dict[str, Any]:
    """The run's input: an execgraph task, or a user message for LangGraph."""
    if is_execgraph(framework):
        return execgraph_task(n, tool_name)
    return {"messages": [HumanMessage(f"Call {tool_name} until told to stop.")]}


def durability(framework: str) -> dict[str, Any]:
    """The ``invoke`` durability that makes ``framework`` crash-safe.

    LangGraph's agents need ``"sync"``: under ``"async"`` a crash can lose a step whose
    tool already ran, and the resumed run calls it again. execgraph runs in its default
    (``"async"``): what a crash must not lose is in its execution store before anything
    acts (``tests/graph/test_turn_replay.py``), and ``invoke`` returns only once its last
    checkpoint is on disk. ``execgraph_sync`` shows what ``"sync"`` would cost it.
    No checkpointer, no durability (LangGraph 1.2 fails on ``durability="sync"`` without
    one: ``'SyncPregelLoop' object has no attribute '_put_checkpoint_fut'``).
    """
    return {} if framework in (EXECGRAPH, "create_agent_nocp") else {"durability": "sync"}


def config(thread: str = THREAD) -> dict[str, Any]:
    """A run config for ``thread``."""
    return {"configurable": {"thread_id": thread}}


def db_bytes(directory: Path) -> int:
    """Bytes of every SQLite file (db, -wal, -shm) under ``directory``.

    Each database's write-ahead log is checkpointed into it first (``TRUNCATE``), for every
    framework alike: a WAL file keeps its high-water size (about 4 MB at SQLite's default
    autocheckpoint) whatever the run wrote, so counting it would measure SQLite's
    settings, not the data.
    """
    for path in directory.glob("*.db"):
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    return sum(
        p.stat().st_size
        for p in directory.iterdir()
        if p.is_file() and (".db" in p.name or p.name.endswith(("-wal", "-shm")))
    )


@dataclass
class RunRecord:
    """One timed run."""

    framework: str
    steps: int
    total_s: float
    stamps: list[float] = field(default_factory=list)
    db_bytes: int = 0
    status: str = ""
    directory: Path | None = None

    @property
    def per_step_ms(self) -> float:
        """Wall time per tool step, until durable."""
        return self.total_s * 1000 / max(self.steps, 1)

    def step_costs_ms(self) -> list[float]:
        """Cost of each step: the gap between consecutive model calls."""
        return [(b - a) * 1000 for a, b in zip(self.stamps, self.stamps[1:], strict=False)]


def run_steps(framework: str, n: int, directory: Path, *, pause: bool = False) -> RunRecord:
    """Run the N-step workload once; time from ``invoke`` to a durable end (or pause)."""
    stamps: list[float] = []
    model = ScriptedChatModel(scripted_replies(framework, n, stamps, pause=pause), keep_calls=1)
    app = build_app(framework, model, directory)
    start = time.perf_counter()
    out = app.invoke(first_input(framework, n), config(), **durability(framework))
    total = time.perf_counter() - start
    if is_execgraph(framework):
        status = str(out.get("status"))
    else:
        status = "DONE" if out["messages"][-1].content == "done" else "UNEXPECTED"
    if model.remaining:
        status += f" ({model.remaining} replies unused)"
    return RunRecord(framework, n, total, stamps, db_bytes(directory), status, directory)
