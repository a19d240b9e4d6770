"""What cannot work is refused where it is written, with a typed error naming the fix:
tool names at ``build_graph``, a missing thread id at the first call that needs it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.errors import ToolDeclarationError, UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.adapters import FileAdapter


def _build(tmp_path: Path, tools: list[Any], arch: str = "react", **kw: Any) -> Any:
    return build_graph(
        arch,
        model=ScriptedChatModel([]),
        tools=tools,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=kw.pop("checkpointer", InMemorySaver()),
        home=tmp_path,
        **kw,
    )


@pytest.mark.parametrize(
    "name", ["finish", "ask_user", "abort", "revise_plan", "request_approval", "wait_for"]
)
def test_a_tool_named_like_a_control_action_is_refused_at_build(tmp_path: Path, name: str) -> None:
    @tool_spec(name=name)
    def control(reason: str) -> str:
        """Looks like a control action."""
        return reason

    with pytest.raises(ToolDeclarationError, match=f"'{name}' is reserved for run control"):
        _build(tmp_path, [control])


def test_a_langchain_tool_named_finish_is_refused_too(tmp_path: Path) -> None:
    @tool
    def finish(output: str) -> str:
        """Finish something."""
        return output

    with pytest.raises(ToolDeclarationError, match="reserved for run control"):
        _build(tmp_path, [finish])


def test_two_different_tools_under_one_name_and_version_are_refused(tmp_path: Path) -> None:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        return query

    @tool_spec(name="search")
    def search_docs(query: str) -> str:
        """Search the docs."""
        return query

    with pytest.raises(ToolDeclarationError, match=r"two different tools .* search@1\.0\.0"):
        _build(tmp_path, [search, search_docs])


def test_an_adapter_tool_and_a_tool_of_the_same_name_collide(tmp_path: Path) -> None:
    @tool_spec(name="read_file")
    def read_file(path: str) -> str:
        """Read a file differently."""
        return path

    with pytest.raises(ToolDeclarationError, match=r"read_file@1\.0\.0"):
        _build(tmp_path, [FileAdapter(tmp_path), read_file])


def test_versions_of_one_tool_and_one_tool_given_twice_are_allowed(tmp_path: Path) -> None:
    @tool_spec(name="lookup", version="1.0.0")
    def lookup_v1(item: str) -> str:
        """Look up (v1)."""
        return item

    @tool_spec(name="lookup", version="2.0.0")
    def lookup_v2(item: str) -> str:
        """Look up (v2)."""
        return item

    adapter = FileAdapter(tmp_path)
    app = _build(tmp_path, [lookup_v1, lookup_v2, lookup_v1, adapter, adapter])
    assert app is not None


# --------------------------------------------------------------------------- thread id

MISSING = r'\{"configurable": \{"thread_id": "\.\.\."\}\}'
TASK = {"task": {"goal": "say done"}}
ABORT = AIMessage(content="", tool_calls=[{"name": "abort", "args": {"reason": "-"}, "id": "a"}])


def _graph(tmp_path: Path, **kw: Any) -> Any:
    """A react graph with the embedded default checkpointer (unless ``checkpointer``)."""
    return build_graph(
        "react",
        model=ScriptedChatModel([AIMessage(content="done"), ABORT]),
        tools=[FileAdapter(tmp_path)],
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        home=tmp_path,
        **kw,
    )


ENTRIES = {
    "invoke": lambda app, cfg: app.invoke(TASK, cfg),
    "stream": lambda app, cfg: list(app.stream(TASK, cfg)),
    "ainvoke": lambda app, cfg: asyncio.run(app.ainvoke(TASK, cfg)),
    "get_state": lambda app, cfg: app.get_state(cfg),
    "get_state_history": lambda app, cfg: list(app.get_state_history(cfg)),
    "update_state": lambda app, cfg: app.update_state(cfg, {"output": "x"}),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize(
    "config", [None, {"configurable": {}}, {"configurable": {"checkpoint_ns": ""}}]
)
def test_no_thread_id_is_a_usage_error_naming_it(
    tmp_path: Path, entry: str, config: dict[str, Any] | None
) -> None:
    """The embedded default checkpointer, and a price table bound into the config (which
    used to let LangGraph's own check pass and the saver fail with ``KeyError``)."""
    app = _graph(tmp_path, prices={"scripted": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}})
    with pytest.raises(UsageError, match=MISSING):
        ENTRIES[entry](app, config)


def test_no_thread_id_without_a_checkpointer_is_refused_too(tmp_path: Path) -> None:
    """Every run files its log under its thread id; two runs without one would share it."""
    app = _graph(tmp_path, checkpointer=False)
    with pytest.raises(UsageError, match=MISSING):
        app.invoke(TASK)
    out = app.with_config(configurable={"thread_id": "bound"}).invoke(TASK)
    # "done" answers the bare goal without tools: the run ends with it at once
    assert out["contract"]["run_id"] == "bound" and out["status"] == "COMPLETED"


def test_a_usage_error_is_still_the_value_error_langgraph_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        _graph(tmp_path).invoke(TASK)
