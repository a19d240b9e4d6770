"""Approve and reject of one call at once: one decision wins, and log, state and world agree.

Two real worker processes answer the same interrupt at the same instant, one approving
and one rejecting, on each backend. The store keeps one decision per approval request
(insert-once); the other worker is told it lost: ``ApprovalConflict``, or, when it
resumes after the run has already ended, its run reports the decision that won. Whatever won, the
ledger (the world), the thread's state and the event log must tell the same story: a
rejection is never followed by ``tool.started``. And a resume with no value is a typed
usage error saying what to pass, not LangGraph's own ``UnboundLocalError``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.nodes.models import ScriptedChatModel
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store import open_store
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import tool_spec
from tests.support.workers import Worker, start_pair

TRIALS = int(os.environ.get("EXECGRAPH_RACE_TRIALS", "100"))


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Worker, Worker, str]]:
    if request.param == "sqlite":
        store, checkpoints = str(tmp_path / "exec.db"), str(tmp_path / "checkpoints.db")
    else:
        store = checkpoints = str(request.getfixturevalue("postgres_database"))
    a, b = start_pair(store, tmp_path / "w", checkpoints)
    yield a, b, store
    a.close()
    b.close()


def _story(store_url: str, base: Path, trial: int) -> dict[str, Any]:
    store = open_store(store_url)
    try:
        events = store.events(f"run-{trial}")
    finally:
        store.close()
    resolved = [e.payload["action"] for e in events if e.type == EventType.APPROVAL_RESOLVED]
    ledger = base / f"ledger-{trial}"
    return {
        "resolved": resolved,
        "started": any(e.type == EventType.TOOL_STARTED for e in events),
        "effects": len(ledger.read_text().splitlines()) if ledger.exists() else 0,
    }


@pytest.mark.timeout(900)
def test_approve_and_reject_at_once_end_consistent(pair: tuple[Worker, Worker, str]) -> None:
    a, b, store_url = pair
    rows, wins, conflicts = [], {"approve": 0, "reject": 0}, 0
    for trial in range(TRIALS):
        (a.base / f"release-{trial}").touch()  # the tool does not hold here
        a.send(op="pause", trial=trial)
        assert a.recv()["paused"]
        at = time.time() + 0.03
        a.send(op="resume", trial=trial, value="approve", at=at)
        b.send(op="resume", trial=trial, value="reject", at=at)
        replies = approver, rejecter = a.recv(), b.recv()
        story = _story(store_url, a.base, trial)
        state = approver.get("state") if approver["ok"] else rejecter.get("state")
        if story["resolved"] == ["approve"]:
            wins["approve"] += 1
            agree = story["effects"] == 1 and story["started"] and state == "succeeded"
            loser, reported = rejecter, rejecter.get("outcome") == "succeeded"
        elif story["resolved"] == ["reject"]:
            wins["reject"] += 1
            agree = story["effects"] == 0 and not story["started"] and state == "failed"
            loser, reported = approver, approver.get("error") == "ApprovalRejected"
        else:
            agree, loser, reported = False, {}, False
        # the loser is told: ApprovalConflict, or (it came after the run ended) its run
        # reports the decision that won
        told = loser.get("raised") == "ApprovalConflict"
        conflicts += told
        agree = agree and (told or (loser.get("ok") and reported))
        rows.append({"trial": trial, **story, "state": state, "agree": agree, "replies": replies})
    bad = [r for r in rows if not r["agree"]]
    report = (
        f"{len(rows)} trials, wins {wins}, {conflicts} losers told ApprovalConflict (the others"
        f" were shown the winner's result), {len(bad)} inconsistent; first: {bad[:3]}"
    )
    print(report)
    assert not bad, report


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": name}])


def test_resume_with_no_value_is_a_usage_error_saying_what_to_pass(tmp_path: Path) -> None:
    ran: list[int] = []

    @tool_spec(effect="irreversible")
    def pay(amount: int) -> str:
        """Pay."""
        ran.append(amount)
        return "paid"

    model = ScriptedChatModel([_call("pay", {"amount": 5}), _call("finish", {"output": "paid"})])
    app = build_graph(
        "react",
        model=model,
        tools=[pay],
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        workspace=tmp_path,
        home=tmp_path,
    )
    cfg: Any = {"configurable": {"thread_id": "resume-none"}}
    assert app.invoke({"task": {"goal": "pay 5"}}, cfg)["__interrupt__"]
    with pytest.raises(UsageError, match='resume="approve"'):
        app.invoke(Command(resume=None), cfg)
    assert ran == []
    out = app.invoke(Command(resume="approve"), cfg)  # still paused: it can be answered
    assert ran == [5] and not out.get("__interrupt__")
