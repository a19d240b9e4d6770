"""On Temporal, a bug fails the run once, and large pending calls still reach a person.

An advance that raises what execgraph never raises (a bug: in the operator's graph
factory, or a model that fails loudly after a tool ran) ends the run FAILED at the first
attempt, its traceback in the error, instead of being retried up to a hundred times, each
retry calling the model (and running reads) again. A run waiting on three approvals of
900 KB of arguments each (2.7 MB: above Temporal's 2 MB payload limit) reaches WAITING,
its status carries each long argument as its size and hash, the whole request is read on
demand, and the approvals run all three payments with their whole arguments.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import SharedGraphs, TemporalRuns
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from tests.adversarial.trust_helpers import paid, pay_tools, worker_thread

pytestmark = pytest.mark.timeout(300)

KEY = "failures-test-approval-key"
MEMO = 900_000


@pytest.fixture(autouse=True)
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", KEY)


async def _result_within(address: str, queue: str, spec: RunSpec, seconds: float) -> Any:
    runs = await TemporalRuns.connect(address, task_queue=queue)
    await runs.start(spec)
    return await asyncio.wait_for(runs.result(spec.run_id), seconds)


def test_a_bug_in_the_graph_factory_fails_the_run_at_the_first_attempt(
    temporal_address: str,
) -> None:
    built: list[str] = []

    def graph_for(spec: RunSpec) -> Any:
        built.append(spec.run_id)
        return {}["no such graph"]  # the operator's bug

    rid = f"bug-{uuid.uuid4().hex[:6]}"
    with worker_thread(temporal_address, graph_for) as queue:
        final = asyncio.run(
            _result_within(temporal_address, queue, RunSpec(rid, {"goal": "x"}), 30)
        )
    assert final.status == "FAILED", final
    assert "KeyError" in final.error and "Traceback" in final.error
    assert built == [rid]  # one attempt


def test_a_model_failing_loudly_after_a_read_is_not_retried(
    temporal_address: str, tmp_path: Path
) -> None:
    reads: list[str] = []
    calls: list[int] = []

    @tool_spec(name="look_up", effect="read", version="1.0.0")
    def look_up(q: str) -> str:
        """Look something up."""
        reads.append(q)
        return f"found {q}"

    def decide(messages: list[Any]) -> AIMessage:
        calls.append(len(messages))
        if any(m.type == "tool" for m in messages):
            raise AssertionError("the model's own bug")  # raised through every layer
        return AIMessage("", tool_calls=[{"name": "look_up", "args": {"q": "x"}, "id": "a"}])

    graphs = Graphs()
    graphs.add_tools("reads", [look_up])
    graphs.add_model("broken", lambda: ScriptedChatModel([decide] * 200))
    rid = f"loud-{uuid.uuid4().hex[:6]}"
    spec = RunSpec(rid, {"goal": "look x up"}, model="broken", tools="reads")
    with worker_thread(temporal_address, SharedGraphs(graphs, home=tmp_path)) as queue:
        final = asyncio.run(_result_within(temporal_address, queue, spec, 30))
    assert final.status == "FAILED", final
    assert "AssertionError: the model's own bug" in final.error
    assert reads == ["x"] and len(calls) == 2  # one read, one failing model call: no retry


def _three_large_payments(messages: list[Any]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        return AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "paid"}, "id": "f"}])
    calls = [
        {"name": "pay", "args": {"to": to, "amount": 1, "memo": to[0] * MEMO}, "id": f"p{n}"}
        for n, to in enumerate(("alice", "bob", "carol"))
    ]
    return AIMessage("", tool_calls=calls)


def test_three_approvals_of_900_kb_each_reach_a_person_and_run_whole(
    temporal_address: str, tmp_path: Path
) -> None:
    graphs = Graphs()
    graphs.add_tools("pay", pay_tools)
    graphs.add_model("large", lambda: ScriptedChatModel([_three_large_payments] * 10))
    rid = f"large-{uuid.uuid4().hex[:6]}"

    async def scenario(queue: str) -> tuple[Any, dict[str, Any], Any]:
        runs = await TemporalRuns.connect(temporal_address, task_queue=queue)
        await runs.start(RunSpec(rid, {"goal": "Pay three"}, model="large", tools="pay"))
        for _ in range(600):
            view = await runs.status(rid)
            if view.waiting or view.ended:
                break
            await asyncio.sleep(0.1)
        whole = await runs.approval(rid, view.interrupts[0]["value"]["call_id"])
        await runs.approve(rid, approver="test")
        return view, whole, await asyncio.wait_for(runs.result(rid), 120)

    with worker_thread(temporal_address, SharedGraphs(graphs, home=tmp_path)) as queue:
        view, whole, final = asyncio.run(scenario(queue))
    assert view.status == "WAITING" and len(view.interrupts) == 3, view.status
    for item in view.interrupts:
        value = item["value"]
        assert value["arguments"]["memo"] is None and value["elided"]["memo"]["chars"] > MEMO
        assert value["args_hash"] and value["arguments"]["to"] in ("alice", "bob", "carol")
    assert len(whole["arguments"]["memo"]) == MEMO  # read whole on demand
    assert final.status == "COMPLETED", final
    ledger = paid(tmp_path / "workspaces" / rid)
    assert sorted(p["to"] for p in ledger) == ["alice", "bob", "carol"]
    assert {p["memo_chars"] for p in ledger} == {MEMO}
