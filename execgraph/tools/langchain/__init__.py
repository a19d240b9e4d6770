"""LangChain tools as ToolSpecs: a declared effect, the model's schema, LangGraph's injections.

**Declaring.** A LangChain tool says what it does the LangChain way, in its ``metadata``
or its ``tags``, read when it is wrapped (by :func:`from_langchain`, by registering it, or
by handing it to ``build_graph``)::

    @tool
    def search(query: str) -> str: ...
    search.metadata = {"effect": "read"}                  # or: search.tags = ["effect:read"]

    save = StructuredTool.from_function(save_note, metadata={"effect": "write",
                                                             "locks": ["file:{path}"]})

Keys: ``effect``, ``idempotent``, ``locks``, ``path_args``, ``targets``, ``timeout_s``,
``cost_usd``, ``version``; tags ``effect:read`` / ``effect:write`` /
``effect:irreversible`` and ``idempotent``. An MCP tool's annotations declare it as well
(:mod:`execgraph.tools.mcp`). Keyword arguments of :func:`from_langchain` override all
of these. A lock key ``file:{arg}`` makes ``arg`` a path argument unless ``path_args`` is
given: it is confined to the workspace, and the tool receives it as an absolute path
inside the workspace (a LangChain tool has no other way to know where that is).

**An undeclared tool is irreversible**, never a read: its execution record is on disk
before it runs, it is never retried (nor run again blindly after a crash), and the
default policy asks a person before every call. Declare a read and it runs without one.

**What the model sees, what the tool gets.** The model is offered the tool's
``tool_call_schema`` (injected arguments left out) and its arguments are validated against
it, unknown ones refused. When the tool runs, LangGraph's injections are filled as
``ToolNode`` fills them: ``InjectedToolCallId`` (the call's id), ``InjectedState`` (the
run's graph state, or one field of it), ``InjectedStore`` (the graph's store) and
``ToolRuntime``. The executor runs the tool inside the graph's runnable context, so the
tool reports to the run's callbacks (``on_tool_start`` / ``on_tool_end`` /
``on_tool_error``: a LangSmith trace shows it), ``get_stream_writer()`` streams, and
``interrupt()`` pauses the run (:mod:`execgraph.nodes.executor.recovery.paused` says what that
means for the call's execution record).

**Errors.** A ``ToolException`` is the tool's message for the model (a ``ModelRetry``), and
so is what the tool's ``handle_tool_error`` makes of one; any other exception is withheld
from the model, as for every tool. A tool that returns a LangGraph ``Command`` is refused:
the executor, not the tool, updates the run's state.

The parts: :mod:`.wrapping` (the declaration and the ToolSpec made from it),
:mod:`.input_schema` (what the model may send), :mod:`.injections` (what LangGraph fills
in) and :mod:`.runner` (running it for the executor).
"""

from __future__ import annotations

from execgraph.tools.langchain.runner import LangChainRunner
from execgraph.tools.langchain.wrapping import UNDECLARED_EFFECT, declaration, from_langchain

__all__ = ["UNDECLARED_EFFECT", "LangChainRunner", "declaration", "from_langchain"]
