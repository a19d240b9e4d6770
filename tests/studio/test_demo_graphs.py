"""The repository's ``langgraph.json`` under ``langgraph dev``: the demo's five graphs are
served, drawn and given input schemas, and run to their end through the SDK (an approval
pause resumed, the fixed workflow's partial end, one committed executor call)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from execgraph.demo.build import demo_task
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.studio import Server, assert_a_person_can_fill, interrupts, served_schemas

GRAPHS = {"workflow", "react", "plan_execute", "hybrid", "executor"}


def test_server_lists_the_five_graphs(server: Server) -> None:
    client = server.client()
    assistants = client.assistants.search(limit=100)
    assert {a["graph_id"] for a in assistants} == GRAPHS
    for graph_id in GRAPHS:
        assert client.assistants.get_graph(graph_id)["nodes"]  # each one draws, as Studio does


def test_every_graph_serves_an_input_schema(server: Server) -> None:
    schemas = served_schemas(server.client())
    assert set(schemas) == GRAPHS
    for arch in GRAPHS - {"executor"}:
        assert_a_person_can_fill(schemas[arch]["input_schema"])
    executor = schemas["executor"]["input_schema"]
    assert executor is not None and set(executor["properties"]) == {"request", "batch"}


@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_demo_pauses_for_publish_approval_and_completes(server: Server, arch: str) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]
    published = server.home / "workspace" / "published"
    shutil.rmtree(published, ignore_errors=True)  # the workspace is shared by the module's runs

    paused: Any = client.runs.wait(thread_id, arch, input={"task": demo_task()})
    assert paused.get("status") != "COMPLETED"
    assert client.threads.get(thread_id)["status"] == "interrupted"
    [pause] = interrupts(client, thread_id)
    # the executor's per-call ApprovalRequest, or hybrid's fixed approval node's batch of them
    asked = pause["value"].get("calls", [pause["value"]])
    assert [call["tool"] for call in asked] == ["publish_report"]
    assert pause["value"]["run_id"] == thread_id  # run_id is the LangGraph thread id
    assert (published.parent / "report.md").is_file()  # the draft is written
    assert not published.exists()  # nothing published before the approval

    final: Any = client.runs.wait(
        thread_id,
        arch,
        command={"resume": {pause["id"]: {"action": "approve"}}},
    )
    assert final["status"] == "COMPLETED", final.get("error")
    assert client.threads.get(thread_id)["status"] == "idle"
    assert interrupts(client, thread_id) == []
    state: Any = client.threads.get_state(thread_id)
    assert state["values"]["status"] == "COMPLETED"
    assert (published / "report.md").is_file()


def test_fixed_workflow_ends_partial_without_a_pause(server: Server) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]

    out: Any = client.runs.wait(thread_id, "workflow", input={"task": demo_task()})

    assert out["status"] == "PARTIAL"
    assert client.threads.get(thread_id)["status"] == "idle"
    assert interrupts(client, thread_id) == []


def test_executor_graph_commits_one_search(server: Server) -> None:
    client = server.client()
    thread_id = client.threads.create()["thread_id"]
    request: dict[str, Any] = {
        "run_id": "studio-exec",
        "turn_id": "turn-1",
        "call_id": "call-1",
        "tool": {"name": "search_corpus"},
        "arguments": {"query": "retrieval augmented generation"},
        "workspace": {"id": "ws", "root": str(server.home / "workspace")},
    }

    out: Any = client.runs.wait(thread_id, "executor", input={"request": request})

    result = out["results"]["call-1"]
    assert result["tool_name"] == "search_corpus"
    assert result["outcome"] == "succeeded" and result["status"] == "OK"
    assert result["data"]["hits"], result
    store = SqliteExecutionStore(server.home / "exec.db")
    try:
        record = store.get("studio-exec:call-1")
        assert record is not None and record.state == "committed"
    finally:
        store.close()
