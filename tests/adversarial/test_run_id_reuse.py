"""A run id names one task: reusing it for another task is refused, on every engine.

Run ``invoice-x`` ("pay bob 5") to its end; then start ``invoice-x`` with "pay carol 7"
from somewhere that does not know the first: from the command line's engine on a home
whose thread was started from Python, from another home over the same PostgreSQL, from a
second Temporal namespace over the same store, and again on Temporal once the first
workflow's history is gone (retention, a new cluster). Each is refused saying why,
nothing runs, and the old run's end is never reported as the new task's.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.service import RPCError, RPCStatusCode

from execgraph.engines.answers import approve
from execgraph.engines.embedded.runs import EmbeddedRuns
from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalRuns
from execgraph.engines.temporal.dev_server import temporal_cli
from execgraph.state.errors import UsageError
from tests.adversarial.trust_helpers import paid, pay_graphs, worker_thread

pytestmark = pytest.mark.timeout(300)

BOB = {"goal": "Pay bob 5"}
CAROL = {"goal": "Pay carol 7"}
KEY = "reuse-test-approval-key"


def _auto(view: Any) -> Any:
    return approve(view, None, "test")


def test_a_thread_started_from_python_is_not_taken_for_another_task(tmp_path: Path) -> None:
    home = tmp_path / "home"
    graphs = pay_graphs(home).graphs
    workspace = home / "workspaces" / "invoice-x"
    graph = graphs.build(RunSpec("invoice-x", BOB, model="scripted", tools="pay"),
                         workspace=workspace, home=home)  # fmt: skip
    config: Any = {"configurable": {"thread_id": "invoice-x"}}
    paused = graph.invoke({"task": BOB}, config)
    (pending,) = paused["__interrupt__"]
    assert graph.invoke(Command(resume={pending.id: "approve"}), config)["status"] == "COMPLETED"

    with EmbeddedRuns(home, graphs=graphs) as runs, pytest.raises(UsageError) as refused:
        runs.start(RunSpec("invoice-x", CAROL, model="scripted", tools="pay"), answerer=_auto)
    assert "already holds another task" in str(refused.value)
    assert not (home / "runs" / "invoice-x.json").exists()  # nothing recorded for it
    assert len(paid(workspace)) == 1


def test_another_home_over_the_same_postgresql_is_refused(
    tmp_path: Path, postgres_database: str
) -> None:
    first = pay_graphs(tmp_path / "a").graphs
    with EmbeddedRuns(tmp_path / "a", database=postgres_database, graphs=first) as runs:
        done = runs.start(RunSpec("invoice-x", BOB, model="scripted", tools="pay"), answerer=_auto)
    assert done.status == "COMPLETED", done

    second = pay_graphs(tmp_path / "b").graphs
    with EmbeddedRuns(tmp_path / "b", database=postgres_database, graphs=second) as runs:
        with pytest.raises(UsageError, match="already holds another task"):
            runs.start(RunSpec("invoice-x", CAROL, model="scripted", tools="pay"), answerer=_auto)
        # the same task is the same run: it is reported as it ended
        again = runs.start(RunSpec("invoice-x", BOB, model="scripted", tools="pay"))
        assert again.status == "COMPLETED"
    assert paid(tmp_path / "b" / "workspaces" / "invoice-x") == []


def _namespace(address: str) -> str:
    """A new namespace on the dev server, once it answers."""
    name = f"second-{uuid.uuid4().hex[:6]}"
    subprocess.run([temporal_cli(), "operator", "namespace", "create", "--address", address,
                    "-n", name], check=True, capture_output=True, timeout=60)  # fmt: skip
    deadline = time.monotonic() + 60
    while subprocess.run([temporal_cli(), "workflow", "list", "--address", address,
                          "-n", name], capture_output=True, timeout=60).returncode:  # fmt: skip
        assert time.monotonic() < deadline, f"namespace {name} never became usable"
        time.sleep(0.5)
    return name


async def _ran(runs: TemporalRuns, spec: RunSpec) -> Any:
    await runs.start(spec)
    for _ in range(600):
        view = await runs.status(spec.run_id)
        if view.waiting:
            await runs.approve(spec.run_id, approver="test")
        elif view.status not in ("PENDING", "RUNNING"):
            break
        await asyncio.sleep(0.1)
    return await runs.result(spec.run_id)


def test_on_temporal_another_namespace_and_a_forgotten_workflow_are_refused(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", KEY)
    other = _namespace(temporal_address)
    shared = pay_graphs(tmp_path / "worker")  # one store, whichever namespace asks
    rid = f"invoice-{uuid.uuid4().hex[:6]}"
    bob = RunSpec(rid, BOB, model="scripted", tools="pay")
    carol = RunSpec(rid, CAROL, model="scripted", tools="pay")

    async def scenario(queue: str, second_queue: str) -> tuple[Any, Any, Any]:
        runs = await TemporalRuns.connect(temporal_address, task_queue=queue)
        first = await _ran(runs, bob)
        elsewhere = await TemporalRuns.connect(
            temporal_address, task_queue=second_queue, namespace=other
        )
        in_other_namespace = await _ran(elsewhere, carol)
        # the first workflow's history is gone (retention, a new cluster): the id is free
        await runs.client.workflow_service.delete_workflow_execution(
            DeleteWorkflowExecutionRequest(
                namespace="default", workflow_execution=WorkflowExecution(workflow_id=rid)
            )
        )
        for _ in range(300):
            try:
                await runs.client.get_workflow_handle(rid).describe()
            except RPCError as exc:
                if exc.status == RPCStatusCode.NOT_FOUND:
                    break
            await asyncio.sleep(0.2)
        after_retention = await _ran(runs, carol)
        return first, in_other_namespace, after_retention

    with (
        worker_thread(temporal_address, shared) as queue,
        worker_thread(temporal_address, shared, namespace=other) as second_queue,
    ):
        first, in_other_namespace, after_retention = asyncio.run(scenario(queue, second_queue))
    assert first.status == "COMPLETED", first
    for refused in (in_other_namespace, after_retention):
        assert refused.status == "FAILED", refused
        assert "already holds another task" in refused.error
    assert [p["to"] for p in paid(tmp_path / "worker" / "workspaces" / rid)] == ["bob"]
