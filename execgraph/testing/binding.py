"""ToolBindingChatModel: the ``bind_tools`` every offline model here shares.

Provider chat models turn the tools they are given into their wire format and bind them
to the request; the scripted model, the demo's offline policy and the evaluation's
policies do the same with OpenAI's tool format, so they see, in ``_generate``'s
``kwargs["tools"]``, exactly which tools a turn offers — and propose only those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ["ToolBindingChatModel", "offered_names"]


class ToolBindingChatModel(BaseChatModel):
    """A chat model that binds tools as provider models do (OpenAI tool dicts)."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind ``tools`` (and ``tool_choice``, if given) to every later request."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)


def offered_names(kwargs: Mapping[str, Any]) -> list[str]:
    """The names of the tools bound for this request, in order."""
    return [t["function"]["name"] for t in kwargs.get("tools") or [] if "function" in t]
