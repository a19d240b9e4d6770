"""Running a wrapped LangChain tool for the executor, with LangChain's own error handling.

The tool runs inside the graph's runnable context, so it reports to the run's callbacks
(``on_tool_start`` / ``on_tool_end`` / ``on_tool_error``: a LangSmith trace shows it),
``get_stream_writer()`` streams, and ``interrupt()`` pauses the run. A ``ToolException``
is the tool's message for the model (a ``ModelRetry``), and so is what the tool's
``handle_tool_error`` makes of one; any other exception is withheld from the model, as
for every tool. A tool that returns a LangGraph ``Command`` that does more than answer its
call is a bug in the tool: the executor, not the tool, updates the run's state.

A tool declared ``response_format="content_and_artifact"`` is run as ``ToolNode`` runs it,
with the model's call, so LangChain hands back both halves: the content is the call's data
(what the model reads), the artifact the result's ``artifact`` (for the application only).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from execgraph.state.errors import ModelRetry, ToolTypeError
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.langchain.injections import Injections, injected
from execgraph.tools.paths import confine_path
from execgraph.tools.runners import resolve_awaitable

__all__ = ["LangChainRunner"]


def _handled(exc: Exception, flag: Any, fallback: str) -> str:
    """What the tool's ``handle_*_error`` setting makes of ``exc``, as text."""
    if isinstance(flag, str):
        return flag
    if callable(flag):
        text = _plain(flag(exc))
        return text if isinstance(text, str) else str(exc)
    return str(exc.args[0]) if exc.args else fallback


def _plain(content: Any) -> Any:
    """Message content made only of text blocks (an MCP tool's) as its text."""
    if (
        isinstance(content, list)
        and content
        and all(isinstance(b, dict) and b.get("type") == "text" for b in content)
    ):
        return "\n".join(str(b.get("text", "")) for b in content)
    return content


class LangChainRunner:
    """Runs one LangChain tool for the executor (a ToolSpec's ``run``).

    LangChain reports the run to the callbacks of the runnable context it runs in, so the
    executor does not report it again (``nodes/executor/invoke.py``).
    """

    def __init__(
        self,
        tool: BaseTool,
        injections: Injections,
        *,
        committed: bool,
        path_args: tuple[str, ...] = (),
        drop_unset: bool = False,
    ) -> None:
        self.tool = tool
        self._tool_errors, self._validation_errors = (
            tool.handle_tool_error,
            tool.handle_validation_error,
        )
        if self._tool_errors or self._validation_errors:
            # Handled errors must stay errors: the handler's text is the model's message.
            self._run_tool = tool.model_copy(
                update={"handle_tool_error": False, "handle_validation_error": False}
            )
        else:
            self._run_tool = tool
        self._injections = injections
        self._committed = committed
        self._path_args = path_args
        self._drop_unset = drop_unset
        self._async_only = getattr(tool, "func", None) is None and bool(
            getattr(tool, "coroutine", None)
        )
        # Only a call shaped as the model's gets a ToolMessage back: LangChain drops the
        # artifact of a tool invoked with its arguments alone.
        self._as_call = injections.call_id or tool.response_format == "content_and_artifact"

    def __call__(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        payload = args.model_dump()
        if self._drop_unset:  # a JSON-schema tool: an omitted optional argument stays omitted
            payload = {k: v for k, v in payload.items() if v is not None}
        for name in self._path_args:
            if isinstance(payload.get(name), str):
                payload[name] = str(confine_path(ctx.workspace_root, payload[name]))
        if self._injections:
            payload.update(injected(self.tool, self._injections, ctx))
        tool_input: dict[str, Any] = payload
        if self._as_call:
            call_id = ctx.tool_call_id or ctx.call_id  # the model's id, as ToolNode passes
            tool_input = {"name": self.tool.name, "args": payload, "id": call_id}
            tool_input["type"] = "tool_call"
        try:
            if self._async_only:
                value = resolve_awaitable(self._run_tool.ainvoke(tool_input), ctx)
            else:
                value = self._run_tool.invoke(tool_input)
        except ToolException as exc:
            if not self._tool_errors:
                raise
            raise ModelRetry(_handled(exc, self._tool_errors, "Tool execution error")) from exc
        except ValidationError as exc:
            if not self._validation_errors:
                raise
            message = _handled(exc, self._validation_errors, "Tool input validation error")
            raise ModelRetry(message) from exc
        if isinstance(value, Command):
            value = self._answer(value)
        artifact = value.artifact if isinstance(value, ToolMessage) else None
        return AdapterOutput(data=self._data(value), committed=self._committed, artifact=artifact)

    def _answer(self, command: Command[Any]) -> ToolMessage:
        """The ToolMessage a returned ``Command`` answers the call with, as ``ToolNode``
        reads one: ``Command(update={"messages": [ToolMessage(...)]})``. Any other update
        (a state key, a ``goto``, a resume) is refused: the executor, not a tool, updates
        the run's state."""
        update = command.update
        messages = update.get("messages") if isinstance(update, dict) else None
        answers = [m for m in messages or () if isinstance(m, ToolMessage)]
        plain = not (command.goto or command.resume is not None or command.graph)
        only_messages = isinstance(update, dict) and set(update) == {"messages"}
        if plain and only_messages and answers and len(answers) == len(messages or ()):
            return answers[-1]
        raise ToolTypeError(
            f"tool {self.tool.name!r} returned a LangGraph Command that does more than "
            'answer the call: only Command(update={"messages": [ToolMessage(...)]}) is '
            "read (its ToolMessage is the result); the executor, not a tool, updates the "
            "run's state, so return the value instead"
        )

    def _data(self, value: Any) -> Any:
        if isinstance(value, ToolMessage):
            if value.status == "error":
                raise ModelRetry(str(_plain(value.content)))
            return _plain(value.content)
        return _plain(value)
