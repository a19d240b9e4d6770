"""Studio's time travel at an approval pause: "re-run from here" and "edit state".

Re-running from the checkpoint where the run waits for a person asks again (the model
is not asked again) and, once approved, does the irreversible call once; the thread's
state still reads afterwards (its messages come back from the stored snapshot as dicts,
and the reducer reads them as ``add_messages`` does). Editing the state of a paused
thread is refused, saying why (it would drop the pending approval), and the approval
stays answerable.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.studio.user_project import UserServer
from tests.support.openai_server import text, tool_call, tool_calls
from tests.support.studio import interrupts


def _ask(order: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"Refund order {order}, 42 EUR."}]}


def _refunded(user_server: UserServer, order: str) -> list[str]:
    """The refunds of ``order`` so far (the module's tests share the server's file)."""
    path = user_server.refunds
    lines = path.read_text().splitlines() if path.exists() else []
    return [line for line in lines if line.split()[0] == order]


def test_rerun_from_the_approval_checkpoint_then_approve_refunds_once(
    user_server: UserServer,
) -> None:
    user_server.model.add(
        tool_calls(tool_call("refund_order", {"order_id": "R-1", "amount": 42.0})),
        text("Refunded R-1."),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]
    paused: Any = client.runs.wait(thread_id, "react", input=_ask("R-1"))
    assert paused.get("status") == "WAITING", paused
    here: Any = client.threads.get_state(thread_id)
    [first] = here["interrupts"]

    rerun: Any = client.runs.wait(  # Studio: "re-run from here" on the approval checkpoint
        thread_id, "react", input=None, checkpoint_id=here["checkpoint"]["checkpoint_id"]
    )
    assert rerun.get("status") == "WAITING", rerun
    [again] = interrupts(client, thread_id)
    assert again["value"]["tool"] == "refund_order" and _refunded(user_server, "R-1") == []

    done: Any = client.runs.wait(
        thread_id, "react", command={"resume": {again["id"]: {"action": "approve"}}}
    )
    assert done["status"] == "COMPLETED", done.get("error")
    assert _refunded(user_server, "R-1") == ["R-1 42.0"]  # once
    state: Any = client.threads.get_state(thread_id)  # GET /threads/{id}/state: 200
    assert state["values"]["status"] == "COMPLETED"
    assert state["values"]["messages"][-1]["content"] == "Refunded R-1."
    history = client.threads.get_history(thread_id, limit=100)
    assert history and first["value"]["tool"] == "refund_order"


def test_edit_state_at_the_approval_pause_is_refused_and_the_approval_stays_answerable(
    user_server: UserServer,
) -> None:
    user_server.model.add(
        tool_calls(tool_call("refund_order", {"order_id": "E-1", "amount": 42.0})),
        text("Refunded E-1."),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]
    paused: Any = client.runs.wait(thread_id, "react", input=_ask("E-1"))
    assert paused.get("status") == "WAITING", paused

    note = {"type": "human", "content": "Note: the customer asked twice."}
    with pytest.raises(httpx.HTTPStatusError) as refused:  # Studio: "edit state"
        client.threads.update_state(thread_id, {"messages": [note]})
    assert refused.value.response.status_code == 400
    said = refused.value.response.json()["detail"]
    assert "waits for a person's answer (approval of refund_order)" in said
    assert "Answer it first" in said

    state: Any = client.threads.get_state(thread_id)
    [pending] = state["interrupts"]  # still offered: a person can still answer it
    assert pending["value"]["tool"] == "refund_order"
    assert state["values"]["status"] == "WAITING"
    assert note["content"] not in str(state["values"]["messages"])
    assert client.threads.get(thread_id)["status"] == "interrupted"

    done: Any = client.runs.wait(
        thread_id, "react", command={"resume": {pending["id"]: {"action": "approve"}}}
    )
    assert done["status"] == "COMPLETED", done.get("error")
    assert _refunded(user_server, "E-1") == ["E-1 42.0"]


def test_rerun_from_the_approval_checkpoint_after_the_refund_does_not_refund_again(
    user_server: UserServer,
) -> None:
    """Approved and done; then "re-run from here" on the old approval checkpoint and
    approve again: the refund is not made a second time, and the state still reads."""
    user_server.model.add(
        tool_calls(tool_call("refund_order", {"order_id": "S-1", "amount": 42.0})),
        text("Refunded S-1."),
    )
    client = user_server.server.client()
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "react", input=_ask("S-1"))
    here: Any = client.threads.get_state(thread_id)
    [first] = here["interrupts"]
    done: Any = client.runs.wait(
        thread_id, "react", command={"resume": {first["id"]: {"action": "approve"}}}
    )
    assert done["status"] == "COMPLETED", done.get("error")

    rerun: Any = client.runs.wait(
        thread_id, "react", input=None, checkpoint_id=here["checkpoint"]["checkpoint_id"]
    )
    for pause in interrupts(client, thread_id):  # asked again, if it is: approve again
        rerun = client.runs.wait(
            thread_id, "react", command={"resume": {pause["id"]: {"action": "approve"}}}
        )
    assert rerun["status"] == "COMPLETED", rerun
    assert _refunded(user_server, "S-1") == ["S-1 42.0"]  # once
    state: Any = client.threads.get_state(thread_id)
    assert state["values"]["messages"][-1]["content"] == "Refunded S-1."
    assert user_server.model.unexpected == []
