"""On Temporal a waiting run keeps its deadlines by itself: the workflow waits with a
timer, and at the first deadline it advances the run, whose waits past it end by their
expiry policy — nobody answers, resumes or signals. On a real Temporal dev server, with
deadlines of a second or two."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.types import interrupt
from temporalio.worker import Replayer

from execgraph.engines.temporal import RunSpec, TemporalRuns
from execgraph.engines.temporal.worker import sandbox_runner
from execgraph.engines.temporal.workflow import ExecgraphRun
from execgraph.graph import build_graph
from execgraph.state.compiled import RunGraph
from execgraph.testing import ScriptedChatModel
from tests.support.temporal_runs import until, worker_running

pytestmark = pytest.mark.timeout(120)


def _ask_then_finish(messages: list[BaseMessage]) -> AIMessage:
    """Ask one question; then finish with what the run was told about it."""
    told = [str(m.content) for m in messages if m.type == "tool"]
    if told:
        call = {"name": "finish", "args": {"output": told[-1]}, "id": "finish"}
    else:
        call = {"name": "ask_user", "args": {"question": "Which city?"}, "id": "ask"}
    return AIMessage("", tool_calls=[call])


@tool
def publish(doc: str) -> str:
    """Publish a document once the editor agrees."""
    return f"{doc}: {interrupt({'question': f'Publish {doc}?'})}"


publish.metadata = {"effect": "write"}


def _publish_then_finish(messages: list[BaseMessage]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        return AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "x"}, "id": "f"}])
    return AIMessage("", tool_calls=[{"name": "publish", "args": {"doc": "q3.md"}, "id": "p"}])


def _graphs(base: Path) -> Any:
    built: dict[str, RunGraph] = {}

    def graph_for(spec: RunSpec) -> RunGraph:
        if spec.run_id not in built:
            script = _publish_then_finish if spec.run_id.startswith("tool") else _ask_then_finish
            model: Any = ScriptedChatModel([script] * 10)
            built[spec.run_id] = build_graph(
                spec.arch, model=model, tools=[publish], home=base / "home", workspace=base / "ws"
            )
        return built[spec.run_id]

    return graph_for


async def _runs(address: str) -> TemporalRuns:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    return await TemporalRuns.connect(address, task_queue=queue, heartbeat_s=2.0)


def test_an_unanswered_question_is_rejected_at_its_deadline(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, Any, float]:
        runs = await _runs(temporal_address)
        async with worker_running(runs, _graphs(tmp_path)):
            task = {"goal": "pick a city", "waits": {"timeout_s": 1.5}}
            await runs.start(RunSpec("ask-expires", task=task))
            waiting = await until(runs, "ask-expires", lambda v: v.status == "WAITING")
            started = time.monotonic()
            final = await asyncio.wait_for(runs.result("ask-expires"), 30)
            took = time.monotonic() - started
        # the timer is in the history: a replay makes the same decisions again
        replayer = Replayer(workflows=[ExecgraphRun], workflow_runner=sandbox_runner())
        history = await runs.client.get_workflow_handle("ask-expires").fetch_history()
        replayed = await replayer.replay_workflow(history)
        assert replayed.replay_failure is None, replayed.replay_failure
        return waiting, final, took

    waiting, final, took = asyncio.run(scenario())
    value = waiting.interrupts[0]["value"]
    assert value["kind"] == "question" and value["expires_at"] == value["asked_at"] + 1.5
    assert final.status == "COMPLETED", final
    assert final.output == "The question expired unanswered; go on without it."
    assert took < 15  # by the timer, not by anything that came later


def test_a_tools_own_question_cancels_the_run_at_its_deadline(
    temporal_address: str, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, Any]:
        runs = await _runs(temporal_address)
        async with worker_running(runs, _graphs(tmp_path)):
            task = {"goal": "publish", "waits": {"timeout_s": 1.0, "on_expiry": "cancel"}}
            await runs.start(RunSpec("tool-expires", task=task))
            waiting = await until(runs, "tool-expires", lambda v: v.status == "WAITING")
            final = await asyncio.wait_for(runs.result("tool-expires"), 30)
            return waiting, final

    waiting, final = asyncio.run(scenario())
    [item] = waiting.interrupts
    assert item["value"] == {"question": "Publish q3.md?"}
    assert item["wait"]["kind"] == "tool" and item["wait"]["on_expiry"] == "cancel"
    assert final.status == "CANCELLED", final
