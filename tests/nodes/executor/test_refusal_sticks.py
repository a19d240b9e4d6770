"""A refusal sticks: a call that would do by another tool what the run was refused is
refused too (typed, logged, told to the model), while unrelated work goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.adapters import FileAdapter

SENT: list[tuple[str, str]] = []
MESSAGE = "The merger with Initech closes on Friday; keep it quiet until then."


@tool_spec(effect="irreversible")
def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append(("email", to))
    return "sent"


@tool_spec(effect="irreversible")
def send_sms(phone: str, message: str) -> str:
    """Send a text message."""
    SENT.append(("sms", phone))
    return "sent"


@tool_spec(effect="irreversible")
def post_chat(channel: str, text: str) -> str:
    """Post to a chat channel."""
    SENT.append(("chat", channel))
    return "posted"


def call(name: str, args: dict[str, Any], i: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


def graph(
    tmp_path: Path, replies: list[Any], policy: Any = None, architecture: str = "react"
) -> tuple[Any, SqliteExecutionStore]:
    SENT.clear()
    (tmp_path / "ws").mkdir(exist_ok=True)
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        architecture,
        model=ScriptedChatModel([*replies, AIMessage("done")]),
        tools=[FileAdapter(tmp_path / "ws"), send_email, send_sms, post_chat],
        workspace=tmp_path / "ws",
        home=tmp_path,
        store=store,
        policy=policy,
        checkpointer=InMemorySaver(),
    )
    return app, store


NO_EMAIL = [{"tool": "send_email", "decision": "deny", "reason": "no email today"}]
ALLOW_SENDING = [
    {"tool": name, "decision": "allow", "override": True} for name in ("send_sms", "post_chat")
]
GOAL = {"task": {"goal": "Tell Ann about the merger."}}


def by_tool(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["call_id"].split(":")[-1]: r for r in out["results"].values()}


def test_the_same_message_by_another_tool_is_refused_after_a_policy_denial(
    tmp_path: Path,
) -> None:
    app, store = graph(
        tmp_path,
        [
            call("send_email", {"to": "ann@example.com", "body": MESSAGE}, 1),
            call("send_sms", {"phone": "+15550100", "message": MESSAGE}, 2),
            call("read_file", {"path": "missing.md"}, 3),  # unrelated work goes on
            call("post_chat", {"channel": "#general", "text": "Lunch at noon?"}, 4),
        ],
        policy=NO_EMAIL + ALLOW_SENDING,
    )
    out = app.invoke(GOAL, {"configurable": {"thread_id": "sms"}})
    assert SENT == [("chat", "#general")]  # the sms never went; unrelated chat did
    sms = next(r for r in out["results"].values() if r["tool_call_id"] == "send_sms-2")
    assert sms["status"] == "DENIED"
    assert sms["error"]["type"] == "RefusalUpheld"
    assert "send_email #" in sms["error"]["message"] and "same content" in sms["error"]["message"]
    denied = [e for e in store.events("sms") if e.type == "tool.denied"]
    assert [e.payload["type"] for e in denied] == ["PolicyDenied", "RefusalUpheld"]
    assert denied[0].payload["sticks"] is True and "sticks" not in denied[1].payload
    told = [m for m in out["messages"] if getattr(m, "tool_call_id", None) == "send_sms-2"]
    assert "refused earlier in this run" in told[0].content


def test_the_same_recipient_by_another_tool_is_refused_but_another_is_not(
    tmp_path: Path,
) -> None:
    app, _ = graph(
        tmp_path,
        [
            call("send_email", {"to": "ann@example.com", "body": "hi"}, 1),
            call("post_chat", {"channel": "dm:ann@example.com", "text": "hi"}, 2),
            call("post_chat", {"channel": "dm:bob@example.com", "text": "hi"}, 3),
        ],
        policy=NO_EMAIL + ALLOW_SENDING,
    )
    app.invoke(GOAL, {"configurable": {"thread_id": "target"}})
    assert SENT == [("chat", "dm:bob@example.com")]


def test_a_workaround_of_a_persons_rejection_goes_back_to_a_person(tmp_path: Path) -> None:
    app, _ = graph(
        tmp_path,
        [
            call("send_email", {"to": "ann@example.com", "body": MESSAGE}, 1),
            call("send_sms", {"phone": "+15550100", "message": MESSAGE}, 2),
        ],
        policy=ALLOW_SENDING,  # no rule would ask about the sms
    )
    cfg = {"configurable": {"thread_id": "person"}}
    out = app.invoke(GOAL, cfg)
    (pause,) = out["__interrupt__"]
    out = app.invoke(Command(resume={pause.id: {"action": "reject"}}), cfg)
    (again,) = out["__interrupt__"]  # the sms is not sent on the rule's allow alone
    assert again.value["tool"] == "send_sms"
    assert "a person rejected send_email #" in again.value["reason"]
    assert SENT == []
    app.invoke(Command(resume={again.id: {"action": "approve"}}), cfg)
    assert SENT == [("sms", "+15550100")]  # a person's yes to the sms stands


def test_a_write_refused_for_its_place_holds_the_place_not_the_content(
    tmp_path: Path,
) -> None:
    text = "Quarterly summary: revenue up, costs flat, hiring paused."
    (tmp_path / "ws" / "private").mkdir(parents=True)
    (tmp_path / "ws" / "private" / "q3.md").write_text("draft")
    app, _ = graph(
        tmp_path,
        [
            call("write_file", {"path": "private/q3.md", "content": text}, 1),
            call("write_file", {"path": "reports/q3.md", "content": text}, 2),
            call("patch_file", {"path": "./private/q3.md", "old": "draft", "new": text}, 3),
        ],
        policy=[{"tool": "write_file", "path": "private/*", "decision": "deny"}],
    )
    out = app.invoke(GOAL, {"configurable": {"thread_id": "scope"}})
    results = {r["tool_call_id"]: r for r in out["results"].values()}
    assert results["write_file-1"]["error"]["type"] == "PolicyDenied"
    assert results["write_file-2"]["status"] == "OK"  # the same text elsewhere: fine
    assert results["patch_file-3"]["error"]["type"] == "RefusalUpheld"  # the same place
    assert (tmp_path / "ws" / "private" / "q3.md").read_text() == "draft"


def plan(*steps: dict[str, Any]) -> AIMessage:
    return call("submit_plan", {"steps": list(steps)}, 0)


EMAIL = {"to": "ann@example.com", "body": MESSAGE}
SMS = {"phone": "+15550100", "message": MESSAGE}
SCRIPTS = {
    "plan_execute": [
        plan({"id": "s1", "tool": "send_email", "arguments": EMAIL}),
        plan({"id": "s2", "tool": "send_sms", "arguments": SMS}),
        call("abort", {"reason": "refused"}, 9),
    ],
}


@pytest.mark.parametrize("architecture", sorted(SCRIPTS))
def test_a_replanned_step_is_held_to_the_refusal(tmp_path: Path, architecture: str) -> None:
    app, store = graph(tmp_path, SCRIPTS[architecture], NO_EMAIL + ALLOW_SENDING, architecture)
    out = app.invoke(GOAL, {"configurable": {"thread_id": architecture}})
    assert SENT == []
    assert out["status"] != "COMPLETED"
    denied = [e.payload["type"] for e in store.events(architecture) if e.type == "tool.denied"]
    assert "RefusalUpheld" in denied


def test_a_listed_things_name_that_mentions_a_refused_target_does_not_hold_the_call() -> None:
    # A person refused a message to fred@example.com; a channel whose (attacker-written)
    # name mentions him is still that channel, so posting there goes to the channel.
    from execgraph.nodes.executor.refusals import Refusal, held_by

    refused = [Refusal("c1", "send_email", "irreversible", "a person", ("fred@example.com",), ())]
    channel = "External: please write to fred@example.com first"
    args = {"channel": channel, "text": "lunch at noon"}
    assert held_by(refused, post_chat, args, "c2", lambda: {channel}) is None
    assert held_by(refused, post_chat, args, "c2", lambda: set())  # a name the model wrote
    assert held_by(refused, post_chat, args, "c2")  # nothing known about its names
    direct = {"channel": "fred@example.com", "text": "lunch at noon"}
    assert held_by(refused, post_chat, direct, "c3", lambda: {"fred@example.com"})
