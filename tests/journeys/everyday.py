"""What the ordinary-use journeys share: a user's tools, a run driven to its end, and
``create_agent`` on the same scripted server beside it.

The tools are what a LangGraph user writes: ``get_weather`` declared a read in its
metadata, ``send_email`` declaring nothing (irreversible: a person approves each call).
:data:`SENT` records the emails that really went out (cleared by :func:`fresh`).
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

ARCHITECTURES = ("react", "workflow", "plan_execute", "hybrid")
SENT: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 22 °C"


get_weather.metadata = {"effect": "read"}


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append(to)
    return f"sent to {to}"


TOOLS = [get_weather, send_email]


def fresh() -> None:
    """Forget the emails of an earlier run."""
    SENT.clear()


def cfg(thread: str) -> dict[str, Any]:
    """A run's config: its thread id."""
    return {"configurable": {"thread_id": thread}}


def drive(app: Any, inp: Any, config: dict[str, Any], action: str = "approve") -> dict[str, Any]:
    """Invoke, answering every approval pause with ``action`` until the run ends."""
    out = app.invoke(inp, config)
    while out.get("__interrupt__"):
        answers = {item.id: {"action": action} for item in out["__interrupt__"]}
        out = app.invoke(Command(resume=answers), config)
    return dict(out)


def agent(model: ChatOpenAI, tools: list[Any] | None = None, **kwargs: Any) -> Any:
    """``create_agent`` as a user builds it, with a checkpointer."""
    return create_agent(
        model, TOOLS if tools is None else tools, checkpointer=InMemorySaver(), **kwargs
    )


def unanswered_calls(messages: list[BaseMessage]) -> list[str]:
    """Ids of the AI messages' tool calls no ToolMessage answers."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    asked = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    return [i for i in asked if i not in answered]
