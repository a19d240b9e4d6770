"""The side-by-side re-run with ChatOpenAI over real HTTP (a scripted OpenAI-compatible
server on 127.0.0.1): re-running from the approval checkpoint sends a second email
without ExecutorMiddleware and none with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from tests.middleware.agents import Effects, agent, approval_checkpoint
from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-openai"}}


@pytest.mark.parametrize(("with_executor", "emails"), [(True, 1), (False, 2)])
def test_a_rerun_from_the_approval_checkpoint_with_chat_openai(
    openai_server: OpenAIServer, tmp_path: Path, with_executor: bool, emails: int
) -> None:
    from langchain_openai import ChatOpenAI

    email = tool_call("send_email", {"to": "ann@example.org", "body": "hello"}, id="call_m")
    openai_server.add(tool_calls(email), text("sent it"), text("sent it"))
    model = ChatOpenAI(
        model="gpt-4o-mini",
        base_url=openai_server.base_url,
        api_key="sk-test-key",  # type: ignore[arg-type]
        max_retries=0,
    )
    effects = Effects()
    app = agent(effects, model, home=tmp_path if with_executor else None)
    app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    approve = {"type": "approve"}
    app.invoke(Command(resume=approve if with_executor else {"decisions": [approve]}), CONFIG)
    assert len(effects.emails) == 1

    out = app.invoke(None, approval_checkpoint(app, CONFIG))

    assert len(effects.emails) == emails
    assert out["messages"][-1].content == "sent it"
