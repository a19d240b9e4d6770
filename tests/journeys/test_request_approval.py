"""A careful model asks first: ``request_approval`` through ``ChatOpenAI``.

``save_note`` is a write the policy allows without asking. The model is not sure the user
wants the note overwritten, so it calls ``request_approval`` with the call and its reason:
the run pauses on the ordinary approval request (the reason shown), the approved call runs
once, and its result answers the model's ``request_approval`` call on the wire. Rejected,
the note is never written and the model is told so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.types import Command

from execgraph import build_graph
from tests.journeys.everyday import cfg
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(120)

NOTES: list[str] = []


@tool
def save_note(text: str) -> str:
    """Overwrite the user's note."""
    NOTES.append(text)
    return "saved"


save_note.metadata = {"effect": "write"}

ASK = {"messages": [HumanMessage("Note that the meeting moved to 3pm.")]}
WHY = "this overwrites the note the user already has"
ASKED = tool_call(
    "request_approval",
    {"tool": "save_note", "args": {"text": "meeting at 3pm"}, "reason": WHY},
    id="call_ask",
)


def _tool_answers(request: Any) -> dict[str, str]:
    """The tool messages a request sent the model, by the call id they answer."""
    return {
        m["tool_call_id"]: str(m["content"])
        for m in request.body["messages"]
        if m.get("role") == "tool"
    }


def _run(
    openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI], thread: str, answer: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    NOTES.clear()
    openai_server.add(tool_calls(ASKED), text("Done."))
    app: Any = build_graph("react", model=chat_model(), tools=[save_note])
    [asked] = app.invoke(ASK, cfg(thread))["__interrupt__"]
    assert NOTES == []  # nothing runs before the person decides
    out = app.invoke(Command(resume=answer), cfg(thread))
    assert not openai_server.unexpected
    return asked.value, out


def test_an_approved_request_runs_once_and_answers_the_models_call(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    shown, out = _run(openai_server, chat_model, "asked-yes", "approve")
    assert shown["tool"] == "save_note" and WHY in shown["reason"]
    assert shown["arguments"] == {"text": "meeting at 3pm"}
    assert out["status"] == "COMPLETED", out.get("error")
    assert "__interrupt__" not in out and NOTES == ["meeting at 3pm"]

    first, second = openai_server.requests
    offered = {t["function"]["name"]: t["function"] for t in first.body["tools"]}
    assert offered["request_approval"]["parameters"]["properties"]["tool"]["enum"] == ["save_note"]
    assert "saved" in _tool_answers(second)["call_ask"]


def test_a_rejected_request_never_runs_and_the_model_is_told(
    home: Path, openai_server: OpenAIServer, chat_model: Callable[..., ChatOpenAI]
) -> None:
    _, out = _run(openai_server, chat_model, "asked-no", "reject")
    assert NOTES == []
    [result] = out["results"].values()
    assert result["status"] == "DENIED" and result["error"]["type"] == "ApprovalRejected"
    _, second = openai_server.requests
    assert "rejected" in _tool_answers(second)["call_ask"]
