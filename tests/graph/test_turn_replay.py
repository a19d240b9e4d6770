"""A turn that re-runs after a crash replays the reply it logged instead of asking again.

The model is the one input that is not deterministic. A node whose checkpoint was never
written runs again; if it asked the model again it could decide differently about calls
the event log already shows (and that may have run). It reuses the logged reply instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import Claim, ExecutionRecord, Reservation
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import Counter


class _DiesAfterLoggingADecision(SqliteExecutionStore):
    """Fault injection: a decision (the first, or the one for ``call_id``) is logged, then
    the node dies before returning."""

    died = False
    call_id: str | None = None

    def append_events(self, events: Sequence[Event], *, durable: bool = True) -> list[str]:
        added = super().append_events(events, durable=durable)
        self._die_after(events)
        return added

    def reserve_all(
        self, claims: Sequence[Claim], *, durable: bool = True, log: Sequence[Event] = ()
    ) -> list[Reservation]:
        reserved = super().reserve_all(claims, durable=durable, log=log)
        self._die_after(log)
        return reserved

    def _die_after(self, logged: Sequence[Event]) -> None:
        if not self.died and any(
            e.type is EventType.DECISION_RECORDED
            and self.call_id in (None, e.payload.get("call_id"))
            for e in logged
        ):
            self.died = True
            raise RuntimeError("the process died after logging the decision")


def _turn(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_a_turn_rerun_after_a_crash_makes_the_logged_decision(tmp_path: Path) -> None:
    looked: list[int] = []

    @tool_spec(effect="read")
    def look(i: int) -> str:
        """Look at item i."""
        looked.append(i)
        return f"item {i}"

    # Asked again, the script would answer with its next reply (look at 2) for turn 1.
    model = ScriptedChatModel(
        [
            _turn("look", {"i": 1}, "a"),
            _turn("look", {"i": 2}, "b"),
            _turn("finish", {"output": "done"}, "f"),
        ]
    )
    store = _DiesAfterLoggingADecision(tmp_path / "exec.db")
    app = build_graph(
        "react", model=model, tools=[look], store=store, checkpointer=InMemorySaver(), home=tmp_path
    )
    config = {"configurable": {"thread_id": "replayed"}}
    task = {
        "task": {"goal": "look", "success_checks": [{"kind": "tool_succeeded", "target": "look"}]}
    }
    with pytest.raises(RuntimeError, match="died"):
        app.invoke(task, config)
    assert len(model.calls) == 1 and looked == []
    out = app.invoke(None, config)  # resume: the turn node runs again from its start
    assert out["status"] == "COMPLETED"
    assert len(model.calls) == 3  # turn 1 was not asked twice
    assert looked == [1, 2]  # turn 1's call is the logged one (look at 1), then turn 2's
    logged = [
        e.payload["arguments"]
        for e in store.events("replayed")
        if e.type is EventType.DECISION_RECORDED and e.payload.get("tool_name") == "look"
    ]
    assert logged == [{"i": 1}, {"i": 2}]  # the log and what ran agree
    assert out["budget"]["used"]["model_calls"] == 3  # the replayed reply counted once


class _DiesAfterCommitting(SqliteExecutionStore):
    """Fault injection: the call ``call_id`` runs and commits, then the node dies."""

    died = False
    call_id = ""

    def commit(self, key: str, result: dict[str, Any], **kw: Any) -> ExecutionRecord:
        record = super().commit(key, result, **kw)
        if not self.died and record.call_id == self.call_id:
            self.died = True
            raise RuntimeError("the process died after committing the call")
        return record


class _FallsBehind(InMemorySaver):
    """Fault injection: from ``behind`` on, checkpoints and writes never reach the saver,
    as when LangGraph's background writer had not caught up when the process died."""

    behind = False

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.behind:
            conf = config["configurable"]
            return {"configurable": {**conf, "checkpoint_id": checkpoint["id"]}}
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if not self.behind:
            super().put_writes(config, writes, task_id, task_path)


def test_checkpoints_lost_in_a_crash_replay_several_turns_from_the_log(tmp_path: Path) -> None:
    # The default durability writes a checkpoint beside the next step, so a crash can lose
    # the last few. The turns they held re-run: their replies come from the log, their
    # writes from their committed records; nothing is asked or written twice.
    written = Counter()

    @tool_spec(effect="write")
    def put(i: int) -> str:
        """Write item i."""
        written.add(i)
        return f"wrote {i}"

    saver = _FallsBehind()

    def falls_behind(reply: AIMessage) -> Any:
        def call(_messages: Any) -> AIMessage:
            saver.behind = True
            return reply

        return call

    model = ScriptedChatModel(
        [
            _turn("put", {"i": 1}, "a"),
            _turn("put", {"i": 2}, "b"),
            falls_behind(_turn("put", {"i": 3}, "c")),
            _turn("put", {"i": 4}, "d"),
            _turn("finish", {"output": "done"}, "f"),
        ]
    )
    store = _DiesAfterCommitting(tmp_path / "exec.db")
    store.call_id = "t4.c0"
    app = build_graph(
        "react", model=model, tools=[put], store=store, checkpointer=saver, home=tmp_path
    )
    config = {"configurable": {"thread_id": "behind"}}
    task = {
        "task": {"goal": "put", "success_checks": [{"kind": "tool_succeeded", "target": "put"}]}
    }
    with pytest.raises(RuntimeError, match="died"):
        app.invoke(task, config)
    assert len(model.calls) == 4 and written.effects == [1, 2, 3, 4]
    saved = app.get_state(config).values
    assert saved["turn"] < 3  # the premise: turns 3 and 4 were lost with their checkpoints
    saver.behind = False
    out = app.invoke(None, config)
    assert out["status"] == "COMPLETED"
    assert len(model.calls) == 5  # only the finish is new; turns 3 and 4 were replayed
    assert written.effects == [1, 2, 3, 4]  # 3 and 4 came from their records
    assert out["budget"]["used"]["model_calls"] == 5
