"""A decision is on disk before it acts; checkpoints are written beside the next step by
default (every one, on disk when ``invoke`` returns), or before it with ``durability="sync"``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph.graph import build_graph
from execgraph.graph.build import DEFAULT_DURABILITY
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import Claim, Reservation
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import InvokeContext, tool_spec


def _call(i: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "look", "args": {"i": i}, "id": f"c{i}"}])


def _finish() -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}]
    )


_TASK = {"task": {"goal": "look", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}}


def test_the_decision_is_logged_before_its_call_runs(tmp_path: Path) -> None:
    # The call runs in the superstep that decided it: what a re-run replays is the model
    # reply in the execution store's log, so it must be there before the call starts.
    seen: list[bool] = []

    @tool_spec(effect="read")
    def look(i: int, ctx: InvokeContext) -> str:
        """Look at what the store holds for this call right now, from another connection."""
        reader = SqliteExecutionStore(tmp_path / "exec.db")
        try:
            logged = reader.events(ctx.run_id)
        finally:
            reader.close()
        seen.append(
            any(
                e.type is EventType.DECISION_RECORDED and e.payload.get("call_id") == ctx.call_id
                for e in logged
            )
            and any(
                e.type is EventType.MODEL_CALLED and e.turn_id == ctx.trace["turn_id"]
                for e in logged
            )
        )
        return "ok"

    app = build_graph(
        "react",
        model=ScriptedChatModel([*(_call(i) for i in range(5)), _finish()]),
        tools=[look],
        checkpointer=SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False)),
        home=tmp_path,
    )
    out = app.invoke(_TASK, {"configurable": {"thread_id": "logged"}})
    assert out["status"] == "COMPLETED"
    assert seen == [True] * 5


def test_by_default_a_checkpoint_is_written_beside_the_next_step(tmp_path: Path) -> None:
    # The default is LangGraph's "async": a turn does not wait for the last checkpoint (the
    # execution store's log, not the checkpoint, is what a crash must not lose; see
    # test_turn_replay). Every turn is still checkpointed, and ``invoke`` returns only once
    # the last one is on disk.
    path = tmp_path / "checkpoints.db"
    cfg = {"configurable": {"thread_id": "durable"}}
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    app = build_graph(
        "react",
        model=ScriptedChatModel([*(_call(i) for i in range(5)), _finish()]),
        tools=[look_tool()],
        checkpointer=saver,
        home=tmp_path,
    )
    assert DEFAULT_DURABILITY == "async"
    out = app.invoke(_TASK, cfg)
    assert out["status"] == "COMPLETED"
    reader = SqliteSaver(sqlite3.connect(path))  # another connection, as another process
    latest = reader.get_tuple(cfg)
    assert latest is not None
    assert latest.checkpoint["channel_values"]["status"] == "COMPLETED"
    turns = {int(c.checkpoint["channel_values"].get("turn") or 0) for c in reader.list(cfg)}
    assert turns == set(range(7))  # the input, six turns, none skipped


class _HeldSaver(SqliteSaver):
    """A real saver whose checkpoint of the first turn is held until the next model call
    starts (or a few seconds pass): only a run that does not wait for it gets there."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.next_call = threading.Event()
        self.overlapped: list[bool] = []

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if checkpoint["channel_values"].get("turn") == 1 and not self.overlapped:
            self.overlapped.append(self.next_call.wait(timeout=5))
        return super().put(config, checkpoint, metadata, new_versions)


def test_build_graph_runs_without_waiting_for_a_checkpoint_by_default(tmp_path: Path) -> None:
    # What the default is, seen from outside: turn 2's model call starts while turn 1's
    # checkpoint is still being written (under "sync" it would wait for it).
    saver = _HeldSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False))

    def second(_messages: list[BaseMessage]) -> AIMessage:
        saver.next_call.set()
        return _call(1)

    app = build_graph(
        "react",
        model=ScriptedChatModel([_call(0), second, _finish()]),
        tools=[look_tool()],
        checkpointer=saver,
        home=tmp_path,
    )
    out = app.invoke(_TASK, {"configurable": {"thread_id": "overlap"}})
    assert out["status"] == "COMPLETED"
    assert saver.overlapped == [True]


def test_sync_durability_puts_each_superstep_on_disk_before_the_next(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.db"
    seen: list[int] = []

    def checked(reply: AIMessage) -> Any:
        def call(_messages: list[BaseMessage]) -> AIMessage:
            reader = SqliteSaver(sqlite3.connect(path))  # another connection, as another process
            latest = reader.get_tuple({"configurable": {"thread_id": "durable"}})
            assert latest is not None
            seen.append(int(latest.checkpoint["channel_values"].get("turn") or 0))
            return reply

        return call

    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    replies = [checked(r) for r in [*(_call(i) for i in range(5)), _finish()]]
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[look_tool()],
        checkpointer=saver,
        home=tmp_path,
    )
    out = app.invoke(_TASK, {"configurable": {"thread_id": "durable"}}, durability="sync")
    assert out["status"] == "COMPLETED"
    assert seen == list(range(6))  # turn k's model call sees turn k-1 on disk


def look_tool() -> Any:
    @tool_spec(effect="read")
    def look(i: int) -> str:
        """Look at item i."""
        return "ok"

    return look


class _Transactions(SqliteExecutionStore):
    """A real store that notes which write carried each decision to the log."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.carried: list[tuple[str, str]] = []

    def _note(self, how: str, events: Sequence[Event]) -> None:
        for e in events:
            if e.type is EventType.DECISION_RECORDED:
                self.carried.append((how, str(e.payload.get("kind"))))

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        self._note("append", events)
        return super().append_events(events, durable=durable)

    def reserve_all(
        self, claims: Sequence[Claim], *, durable: bool = True, log: Sequence[Event] = ()
    ) -> list[Reservation]:
        self._note("reserve", log)
        return super().reserve_all(claims, durable=durable, log=log)


def test_a_turns_decisions_ride_in_its_calls_reservation(tmp_path: Path) -> None:
    # One store transaction fewer per step: the reply and decisions are written by the
    # transaction that reserves the calls they led to; a finish has none, so it appends.
    store = _Transactions(tmp_path / "exec.db")
    app = build_graph(
        "react",
        model=ScriptedChatModel([*(_call(i) for i in range(3)), _finish()]),
        tools=[look_tool()],
        store=store,
        checkpointer=SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False)),
        home=tmp_path,
    )
    out = app.invoke(_TASK, {"configurable": {"thread_id": "carried"}})
    assert out["status"] == "COMPLETED"
    assert store.carried == [("reserve", "tool_call")] * 3 + [("append", "finish")]
