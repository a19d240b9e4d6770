"""LangChain tools through a compiled graph: as LangGraph's ToolNode would run them.

An undeclared tool waits for a person; a tool runs inside the graph's runnable context,
so ``interrupt()`` pauses the run and a resume runs the call again with the answer (not
settled ``unknown``), ``get_stream_writer()`` streams, the run's callbacks hear every tool
run, and ``InjectedState`` / ``InjectedStore`` / ``ToolRuntime`` are filled.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt

from execgraph import build_graph, tool_spec
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from tests.support.executor import Counter

pytestmark = pytest.mark.timeout(120)

CHECKS = [{"kind": "output_contains", "value": "done"}]


def _call(name: str, call_id: str, **args: object) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _finish() -> AIMessage:
    return _call("finish", "f1", output="done")


def _app(tmp_path: Path, tools: list[Any], replies: list[AIMessage]) -> Any:
    return build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=tools,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
        tool_errors="model",  # ``broken``'s bug goes on to the model: the run completes
    )


def _cfg(**extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": "lc"}, **extra}


def _task() -> dict[str, Any]:
    return {"task": {"goal": "do it", "success_checks": CHECKS}}


def test_an_undeclared_langchain_tool_waits_for_a_person(tmp_path: Path) -> None:
    sent = Counter()

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.add(to)
        return f"sent to {to}"

    app = _app(tmp_path, [send_email], [_call("send_email", "s1", to="ceo@x.test"), _finish()])
    out = app.invoke(_task(), _cfg())
    [pause] = out["__interrupt__"]
    assert (pause.value["kind"], pause.value["tool"], pause.value["effect"]) == (
        "approval",
        "send_email",
        "irreversible",
    )
    assert len(sent) == 0  # nobody asked, nothing sent
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), _cfg())
    assert out["status"] == "COMPLETED" and sent.effects == ["ceo@x.test"]


def test_a_tool_that_interrupts_pauses_the_run_and_runs_again_with_the_answer(
    tmp_path: Path,
) -> None:
    done = Counter()

    @tool
    def publish(doc: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Publish a document once the editor agrees."""
        get_stream_writer()({"asking": doc})
        answer = interrupt({"question": f"publish {doc}?"})
        done.add((doc, answer, tool_call_id))
        return f"{doc} published ({answer})"

    publish.metadata = {"effect": "write"}  # runs in the turn: its own interrupt() asks
    app = _app(tmp_path, [publish], [_call("publish", "p1", doc="report.md"), _finish()])
    streamed = [
        chunk
        for mode, chunk in app.stream(_task(), _cfg(), stream_mode=["custom", "updates"])
        if mode == "custom" and "kind" not in chunk  # not the runtime's own live events
    ]
    assert streamed == [{"asking": "report.md"}]
    state = app.get_state(_cfg())
    [pause] = state.interrupts
    assert pause.value == {"question": "publish report.md?"} and len(done) == 0
    out = app.invoke(Command(resume="yes"), _cfg())
    assert out["status"] == "COMPLETED", out.get("error")
    [(doc, answer, call_id)] = done.effects
    assert (doc, answer) == ("report.md", "yes")
    [result] = out["results"].values()
    assert call_id == "p1" != result["call_id"]  # the model's id, injected as by ToolNode
    # Run again from its start, not reconciled as a crash would be (a write without a
    # probe would be settled unknown and never run).
    assert (result["outcome"], result["data"]) == ("succeeded", "report.md published (yes)")


class Recorder(BaseCallbackHandler):
    """Records the tool-run callbacks a LangSmith tracer would receive."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, UUID | None]] = []
        self.names: dict[UUID, str] = {}

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.names[run_id] = serialized["name"]
        self.events.append(("start", serialized["name"], parent_run_id))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append(("end", self.names[run_id], None))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append(("error", self.names[run_id], None))


def _traced_tools() -> list[Any]:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q.upper()

    lookup.tags = ["effect:read"]

    @tool_spec(effect="read")
    def count(n: int) -> int:
        """Count."""
        return n

    @tool_spec(effect="read", retry=None)
    def broken() -> str:
        """Fail."""
        raise RuntimeError("boom")

    return [lookup, count, broken]


_REPLIES = [_call("lookup", "l1", q="x"), _call("count", "c1", n=2), _call("broken", "b1")]


def test_every_tool_run_reaches_the_runs_callbacks(tmp_path: Path) -> None:
    recorder = Recorder()
    app = _app(tmp_path, _traced_tools(), [*_REPLIES, _finish()])
    out = app.invoke(_task(), _cfg(callbacks=[recorder]))
    assert out["status"] == "COMPLETED"
    assert [e[:2] for e in recorder.events] == [
        ("start", "lookup"),
        ("end", "lookup"),
        ("start", "count"),
        ("end", "count"),
        ("start", "broken"),
        ("error", "broken"),
    ]
    parents = [e[2] for e in recorder.events if e[0] == "start"]
    assert all(p is not None for p in parents)  # children of the run's nodes, as traced


def test_callbacks_and_interrupts_work_under_ainvoke(tmp_path: Path) -> None:
    recorder = Recorder()

    @tool
    async def confirm(doc: str) -> str:
        """Ask, then confirm."""
        return f"{doc}: {interrupt('ok?')}"

    confirm.metadata = {"effect": "read"}
    app = _app(tmp_path, [*_traced_tools(), confirm], [_call("confirm", "k1", doc="d"), _finish()])

    async def run() -> dict[str, Any]:
        first = await app.ainvoke(_task(), _cfg(callbacks=[recorder]))
        assert first["__interrupt__"][0].value == "ok?"
        return await app.ainvoke(Command(resume="fine"), _cfg(callbacks=[recorder]))

    out = asyncio.run(run())
    assert out["status"] == "COMPLETED", out.get("error")
    [result] = out["results"].values()
    assert result["data"] == "d: fine"
    assert [e[:2] for e in recorder.events] == [
        ("start", "confirm"),
        ("error", "confirm"),  # the interrupt, as LangChain reports it
        ("start", "confirm"),
        ("end", "confirm"),
    ]


def test_injected_state_store_and_runtime_are_filled(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @tool
    def inspect_run(
        note: str,
        task: Annotated[dict[str, Any], InjectedState("task")],
        state: Annotated[dict[str, Any], InjectedState],
        store: Annotated[Any, InjectedStore()],
        runtime: ToolRuntime,
    ) -> str:
        """Look at the run."""
        store.put(("notes",), "last", {"note": note})
        seen.update(
            goal=task["goal"],
            keys=set(state),
            call_id=runtime.tool_call_id,
            runtime_goal=runtime.state["task"]["goal"],
            same_store=runtime.store is store,
        )
        runtime.stream_writer({"inspected": note})
        return "inspected"

    inspect_run.metadata = {"effect": "read"}
    app = _app(tmp_path, [inspect_run], [_call("inspect_run", "i1", note="n"), _finish()])
    app.store = InMemoryStore()  # as a LangGraph server gives a deployed graph
    chunks = list(app.stream(_task(), _cfg(), stream_mode=["custom", "values"]))
    custom = [c for mode, c in chunks if mode == "custom" and "kind" not in c]
    out = next(c for mode, c in reversed(chunks) if mode == "values")
    assert out["status"] == "COMPLETED", out.get("error")
    [result] = out["results"].values()
    assert seen["goal"] == seen["runtime_goal"] == "do it"
    assert {"task", "contract", "results"} <= seen["keys"]
    assert seen["call_id"] == "i1" == result["tool_call_id"] and seen["same_store"] is True
    assert app.store.get(("notes",), "last").value == {"note": "n"}  # type: ignore[union-attr]
    assert custom == [{"inspected": "n"}]


def test_a_content_and_artifact_tool_keeps_its_artifact_out_of_the_models_sight(
    tmp_path: Path,
) -> None:
    @tool(response_format="content_and_artifact")
    def search(query: str) -> tuple[str, list[Document]]:
        """Search the notes."""
        docs = [Document(page_content="secret body " * 3000, metadata={"id": i}) for i in (1, 2)]
        return f"2 notes match {query}", docs

    search.metadata = {"effect": "read"}
    model = ScriptedChatModel([_call("search", "s1", query="q3"), _finish()])
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react",
        model=model,
        tools=[search],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    out = app.invoke(_task(), _cfg())
    assert out["status"] == "COMPLETED", out.get("error")
    [result] = out["results"].values()
    assert result["data"] == "2 notes match q3"  # the content: what the model reads
    # the artifact is JSON data, and bounded as data is: too large for state, so stored
    stored = result["artifact"]
    assert set(stored) >= {"artifact", "preview"} and stored["artifact"].startswith("sha256:")
    assert stored["preview"].startswith('[{"id": null, "metadata": {"id": 1}, "page_content"')
    whole = json.loads(store.get_artifact(stored["artifact"]))  # all of it, by its ref
    assert [d["metadata"] for d in whole] == [{"id": 1}, {"id": 2}]
    [message] = [m for m in out["messages"] if m.type == "tool" and m.name == "search"]
    assert message.artifact["artifact"] == stored
    seen = "".join(str(m.content) for m in model.calls[-1])
    assert "2 notes match q3" in seen and "secret body" not in seen


def test_a_commands_tool_message_keeps_its_artifact(tmp_path: Path) -> None:
    @tool
    def lookup(term: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:  # type: ignore[type-arg]
        """Look a term up."""
        answer = ToolMessage(f"{term}: found", artifact={"hits": 3}, tool_call_id=tool_call_id)
        return Command(update={"messages": [answer]})

    lookup.metadata = {"effect": "read"}
    app = _app(tmp_path, [lookup], [_call("lookup", "l1", term="q3"), _finish()])
    out = app.invoke(_task(), _cfg())
    [result] = [r for r in out["results"].values() if r["tool_name"] == "lookup"]
    assert result["data"] == "q3: found" and result["artifact"] == {"hits": 3}
