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

import copy
import os
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.state.errors import ApprovalConflict, UsageError
from execgraph.state.events import EventType
from execgraph.state.store import open_store
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.support.executor import config, make_deps, make_executor, request
from tests.support.workers import Worker

TRIALS = int(os.environ.get("EXECGRAPH_RACE_TRIALS", "100"))


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
        workspace=tmp_path / "ws",
        home=tmp_path,
    )
    cfg: Any = {"configurable": {"thread_id": "resume-none"}}
    assert app.invoke({"task": {"goal": "pay 5"}}, cfg)["__interrupt__"]
    with pytest.raises(UsageError, match='resume="approve"'):
        app.invoke(Command(resume=None), cfg)
    assert ran == []
    out = app.invoke(Command(resume="approve"), cfg)  # still paused: it can be answered
    assert ran == [5] and not out.get("__interrupt__")


POST = AIMessage(content="", tool_calls=[{"name": "post", "args": {"item": "a"}, "id": "post-0"}])
REPLIES = {
    "react": [POST, *[_call("finish", {"output": "not posted"})] * 12],
    "hybrid": [
        _call("look", {"item": "a"}),
        _call("finish", {"output": "looked"}),
        _call("save", {"item": "a"}),
        _call("finish", {"output": "saved"}),
        POST,
        *[_call("finish", {"output": "not posted"})] * 12,
    ],
}


@pytest.mark.parametrize("arch", sorted(REPLIES))
def test_a_worker_answering_after_another_answered_otherwise_runs_nothing(
    tmp_path: Path, arch: str
) -> None:
    """A second worker that loaded the paused checkpoint before the first one's rejection
    ended the run: its approval loses (ApprovalConflict), and nothing is posted. Both the
    executor's own approval (react) and hybrid's fixed publish gate."""
    posted: list[str] = []

    @tool_spec(effect="read")
    def look(item: str) -> str:
        """Look an item up."""
        return "found"

    @tool_spec(effect="write")
    def save(item: str) -> str:
        """Save an item."""
        return "saved"

    @tool_spec(effect="irreversible")
    def post(item: str) -> str:
        """Post an item (irreversible)."""
        posted.append(item)
        return "posted"

    def worker(saver: InMemorySaver) -> Any:
        return build_graph(
            arch,
            model=ScriptedChatModel(REPLIES[arch]),
            tools=[look, save, post],
            store=SqliteExecutionStore(tmp_path / "exec.db"),
            checkpointer=saver,
            home=tmp_path,
        )

    saver = InMemorySaver()
    first = worker(saver)
    cfg: Any = {"configurable": {"thread_id": f"late-{arch}"}}
    task = {"goal": "post a", "budgets": {"model_calls": 10}}
    [pause] = first.invoke({"task": task}, cfg)["__interrupt__"]
    second = worker(copy.deepcopy(saver))  # it loaded the paused run, then was slow
    first.invoke(Command(resume={pause.id: {"action": "reject", "reason": "no"}}), cfg)
    assert posted == []
    with pytest.raises(ApprovalConflict, match="'reject'"):
        second.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
    assert posted == []


def test_the_executor_alone_refuses_a_resume_with_no_value_too(tmp_path: Path) -> None:
    ran: list[int] = []

    @tool_spec(effect="irreversible")
    def pay(amount: int) -> str:
        """Pay."""
        ran.append(amount)
        return "paid"

    deps = make_deps(tmp_path, [pay])
    app = make_executor(deps)
    cfg = config()
    paused = app.invoke({"request": request("pay", {"amount": 5}, root=tmp_path)}, cfg)
    [pause] = paused["__interrupt__"]
    with pytest.raises(UsageError, match='resume="approve"'):
        app.invoke(Command(resume=None), cfg)  # before: LangGraph's UnboundLocalError
    assert ran == [] and app.get_state(cfg).interrupts  # still paused, still answerable
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
    assert ran == [5] and out["results"]["call-1"]["outcome"] == "succeeded"
