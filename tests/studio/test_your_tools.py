"""Studio over a user's own project: their tools (through ``execgraph.studio``) and their own
graph module serve, pause a write for approval, resume from the SDK and run their tool."""

from __future__ import annotations

from typing import Any

from tests.studio.user_project import UserServer
from tests.support.openai_server import tool_call, tool_calls
from tests.support.studio import assert_a_person_can_fill, interrupts, served_schemas


def _refund_task() -> dict[str, Any]:
    checks = [{"kind": "tool_succeeded", "target": "refund_order"}]
    return {"goal": "Refund order A-1", "success_checks": checks, "budgets": {"model_calls": 5}}


def test_studio_serves_your_tools_and_their_input_schema(user_server: UserServer) -> None:
    client = user_server.server.client()
    schemas = served_schemas(client)
    assert set(schemas) == {"shop", "react"}
    for graph_id in schemas:
        assert_a_person_can_fill(schemas[graph_id]["input_schema"])
    drawn = {node["id"] for node in client.assistants.get_graph("react")["nodes"]}
    assert {"admit", "decide", "executor", "verify"} <= drawn


def test_a_paused_call_of_your_tool_is_approved_from_the_sdk(user_server: UserServer) -> None:
    user_server.model.add(
        tool_calls(tool_call("refund_order", {"order_id": "A-1", "amount": 42.0})),
        tool_calls(tool_call("finish", {"output": "Refunded A-1."})),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]

    paused: Any = client.runs.wait(thread_id, "react", input={"task": _refund_task()})

    assert paused.get("status") == "WAITING"
    assert client.threads.get(thread_id)["status"] == "interrupted"
    [pause] = interrupts(client, thread_id)
    assert pause["value"]["tool"] == "refund_order"
    assert not user_server.refunds.exists()  # nothing refunded before the approval

    run = client.runs.create(
        thread_id, "react", command={"resume": {pause["id"]: {"action": "approve"}}}
    )
    final: Any = client.runs.join(thread_id, run["run_id"])

    assert final["status"] == "COMPLETED", final.get("error")
    assert final["output"] == "Refunded A-1."
    assert user_server.refunds.read_text() == "A-1 42.0\n"
    assert client.threads.get(thread_id)["status"] == "idle"


def test_your_own_graph_module_runs_your_langchain_tool(user_server: UserServer) -> None:
    user_server.model.add(
        tool_calls(tool_call("lookup_order", {"order_id": "B-7"})),
        tool_calls(tool_call("finish", {"output": "B-7 was delivered."})),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]
    checks = [{"kind": "tool_succeeded", "target": "lookup_order"}]
    task = {"goal": "Where is order B-7?", "success_checks": checks}

    out: Any = client.runs.wait(thread_id, "shop", input={"task": task})

    assert out["status"] == "COMPLETED", out.get("error")
    [result] = [r for r in out["results"].values() if r["tool_name"] == "lookup_order"]
    assert result["data"] == "order B-7: delivered, 42.00 EUR"
