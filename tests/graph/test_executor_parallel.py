"""Parallel executor calls in one superstep via ``Send``, each pausing for approval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

from execgraph.graph.executor import build_executor
from execgraph.state.contracts import Evidence
from execgraph.state.schema import RunState
from execgraph.tools import AdapterOutput, tool_spec
from tests.support.executor import Counter, config, make_deps, request


def test_two_sends_pause_together_and_resume_by_interrupt_id(tmp_path: Path) -> None:
    published = Counter()

    @tool_spec(effect="irreversible")
    def publish(doc: str) -> str:
        """Publish a document."""
        published.add(doc)
        return f"published {doc}"

    deps = make_deps(tmp_path, [publish])
    calls = [request("publish", {"doc": d}, root=tmp_path, call_id=f"c-{d}") for d in "ab"]

    def fan_out(state: RunState) -> list[Send]:
        return [Send("executor", {"request": r}) for r in calls]

    parent = StateGraph(RunState)
    parent.add_node("executor", build_executor(deps))
    parent.add_conditional_edges(START, fan_out, ["executor"])
    parent.add_edge("executor", END)
    app = parent.compile(checkpointer=InMemorySaver())

    out = app.invoke({"task": {"goal": "publish both"}}, config())
    pauses = out["__interrupt__"]
    assert sorted(p.value["call_id"] for p in pauses) == ["c-a", "c-b"]
    assert len(published) == 0

    resume: dict[str, Any] = {p.id: {"action": "approve"} for p in pauses}
    out = app.invoke(Command(resume=resume), config())
    assert sorted(published.effects) == ["a", "b"]  # each effect exactly once
    assert {k: v["outcome"] for k, v in out["results"].items()} == {
        "c-a": "succeeded",
        "c-b": "succeeded",
    }
    assert out["events"]["count"] == len(deps.store.events("run-1"))


def test_parallel_results_and_evidence_merge_without_loss(tmp_path: Path) -> None:
    @tool_spec
    def probe(name: str) -> AdapterOutput:
        """Observe one named thing."""
        ev = Evidence(source_id=f"probe:{name}", kind="observation", value=name.upper())
        return AdapterOutput(data=name, evidence=(ev,))

    deps = make_deps(tmp_path, [probe])
    names = [f"n{i}" for i in range(6)]

    def fan_out(state: RunState) -> list[Send]:
        return [
            Send("executor", {"request": request("probe", {"name": n}, root=tmp_path, call_id=n)})
            for n in names
        ]

    parent = StateGraph(RunState)
    parent.add_node("executor", build_executor(deps))
    parent.add_conditional_edges(START, fan_out, ["executor"])
    parent.add_edge("executor", END)
    out = parent.compile().invoke({"task": {"goal": "look"}})
    assert sorted(out["results"]) == names
    assert sorted(out["evidence"]) == [f"probe:{n}" for n in names]
