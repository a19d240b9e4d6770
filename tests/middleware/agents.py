"""The same ``create_agent`` agent with and without ExecutorMiddleware, for side-by-side tests.

Its tools count every time they really run (``Effects``), so a test can say how many
emails went out, not how many messages claim one did. Without the middleware the agent
guards ``send_email`` with LangChain's HumanInTheLoopMiddleware, as such an agent does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from execgraph import ExecutorMiddleware, ScriptedChatModel


class Effects:
    """What the tools really did, per (tool, arguments)."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.emails: list[dict[str, Any]] = []

    def tools(self) -> list[BaseTool]:
        effects = self

        @tool
        def send_email(to: str, body: str) -> str:
            """Send an email (irreversible: it is undeclared)."""
            effects.emails.append({"to": to, "body": body})
            effects.runs[f"send_email:{to}"] += 1
            return f"sent to {to}"

        @tool
        def log_line(line: str) -> str:
            """Append a line to the log."""
            effects.runs[f"log_line:{line}"] += 1
            return "logged"

        log_line.metadata = {"effect": "write"}
        return [send_email, log_line]


def call(tool: str, call_id: str, /, **args: Any) -> dict[str, Any]:
    """One tool call of a scripted model reply."""
    return {"name": tool, "args": args, "id": call_id}


def reply(*calls: dict[str, Any]) -> dict[str, Any]:
    """A scripted model reply making ``calls``."""
    return {"content": "", "tool_calls": list(calls)}


def agent(
    effects: Effects,
    replies: Sequence[Any] | BaseChatModel,
    *,
    home: Path | None,
    **options: Any,
) -> Any:
    """The agent: with ExecutorMiddleware when ``home`` is given, else with
    HumanInTheLoopMiddleware on ``send_email``; its model replies ``replies`` (a scripted
    model), or is ``replies`` (a chat model)."""
    model = replies if isinstance(replies, BaseChatModel) else ScriptedChatModel(list(replies))
    if home is not None:
        middleware: list[Any] = [ExecutorMiddleware(home=home, **options)]
    else:
        middleware = [HumanInTheLoopMiddleware(interrupt_on={"send_email": True})]
    return create_agent(
        model, tools=effects.tools(), middleware=middleware, checkpointer=InMemorySaver()
    )


def approval_checkpoint(app: Any, config: dict[str, Any]) -> dict[str, Any]:
    """The config of the last checkpoint at which the tools were about to run."""
    for snapshot in app.get_state_history(config):
        if snapshot.next and set(snapshot.next) == {"tools"}:
            return dict(snapshot.config)
    raise AssertionError("no checkpoint before the tools ran")
