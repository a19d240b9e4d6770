"""A turn's calls that no rule could pause run together, side by side, in the turn itself;
the executor node runs the calls that may pause, and batches when sent one."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.errors import StoreError
from execgraph.state.events import Event
from execgraph.state.store import Claim, Reservation
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import PolicyEngine, ToolRegistry, ToolSpec, tool_spec
from tests.support.executor import SECRET, Counter, config, request

WIDTH = 3


def _turn(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    tool_calls = [{"name": n, "args": a, "id": f"p{k}"} for k, (n, a) in enumerate(calls)]
    return AIMessage(content="", tool_calls=tool_calls)


def _finish() -> AIMessage:
    return _turn(("finish", {"output": "ok"}))


def _task(tool: str) -> dict[str, Any]:
    return {"task": {"goal": "go", "success_checks": [{"kind": "tool_succeeded", "target": tool}]}}


def test_a_turns_reads_run_together_in_the_turn(tmp_path: Path) -> None:
    together = threading.Barrier(WIDTH, timeout=10)  # breaks unless all calls run at once

    @tool_spec(effect="read")
    def meet(i: int) -> str:
        """Wait until every call of the batch is running."""
        together.wait()
        return f"met {i}"

    model = ScriptedChatModel([_turn(*[("meet", {"i": i}) for i in range(WIDTH)]), _finish()])
    app = build_graph(
        "react", model=model, tools=[meet], checkpointer=InMemorySaver(), home=tmp_path
    )
    updates = list(app.stream(_task("meet"), config("batch"), stream_mode="updates"))
    assert not [u for u in updates if "executor" in u]  # no superstep of their own
    [batch] = [u["decide"] for u in updates if "decide" in u and "results" in u["decide"]]
    assert sorted(r["data"] for r in batch["results"].values()) == [
        f"met {i}" for i in range(WIDTH)
    ]
    assert len(batch["events"]["recent"]) == len(set(batch["events"]["recent"])) >= 3 * WIDTH
    final = app.get_state(config("batch")).values
    assert final["status"] == "COMPLETED"
    assert final["events"]["count"] >= 3 * WIDTH  # every call's events counted once


def test_reads_finish_while_a_write_waits_for_a_person(tmp_path: Path) -> None:
    looked, published = Counter(), Counter()

    @tool_spec(effect="read")
    def look(i: int) -> str:
        """Read something."""
        looked.add(i)
        return "seen"

    @tool_spec(effect="irreversible")
    def publish(doc: str) -> str:
        """Publish a document."""
        published.add(doc)
        return "published"

    turn = _turn(("look", {"i": 0}), ("publish", {"doc": "r"}), ("look", {"i": 1}))
    model = ScriptedChatModel([turn, _finish()])
    app = build_graph(
        "react", model=model, tools=[look, publish], checkpointer=InMemorySaver(), home=tmp_path
    )
    paused = app.invoke(_task("publish"), config("mixed"))
    assert paused["status"] == "WAITING"
    assert len(looked) == 2 and len(published) == 0  # the reads did not wait for the person
    [asked] = app.get_state(config("mixed")).interrupts
    out = app.invoke(Command(resume={asked.id: {"action": "approve"}}), config("mixed"))
    assert out["status"] == "COMPLETED"
    assert len(looked) == 2 and published.effects == ["r"]  # the resume re-ran no read


class _FlakyRegistry(ToolRegistry):
    """A registry whose backend fails once for one tool (fault injection)."""

    def __init__(self, tools: list[ToolSpec], broken: str) -> None:
        super().__init__(tools)
        self.broken: str | None = broken

    def resolve(self, name: str, requested_version: str | None = None) -> ToolSpec:
        if name == self.broken:
            self.broken = None
            raise RuntimeError("registry backend unavailable")
        return super().resolve(name, requested_version)


def test_a_failing_batch_lets_running_calls_commit_first(tmp_path: Path) -> None:
    slow_done = Counter()

    @tool_spec(effect="write")
    def slow(i: int) -> str:
        """A write that takes a moment."""
        time.sleep(0.3)
        slow_done.add(i)
        return "written"

    @tool_spec(effect="read")
    def quick(i: int) -> str:
        """A read."""
        return "read"

    store = SqliteExecutionStore(tmp_path / "exec.db")
    deps = ExecutorDeps(
        registry=_FlakyRegistry([slow, quick], broken="quick"),
        policy=PolicyEngine(),
        store=store,
        approval_secret=SECRET,
    )
    executor = build_executor(deps, checkpointer=InMemorySaver())
    batch = [
        request("slow", {"i": 1}, root=tmp_path, call_id="c0"),
        request("quick", {"i": 2}, root=tmp_path, call_id="c1"),
    ]
    with pytest.raises(RuntimeError, match="registry backend"):
        executor.invoke({"batch": batch}, config("first"))
    # The write that had started was committed before the error left the node.
    [record] = store.committed("run-1")
    assert record.call_id == "c0" and record.result is not None
    assert record.result["status"] == "OK"
    out = executor.invoke({"batch": batch}, config("again"))  # the node's re-run
    assert {k: r["status"] for k, r in out["results"].items()} == {"c0": "OK", "c1": "OK"}
    assert slow_done.effects == [1]  # taken from the record, not written twice


class _CountingStore(SqliteExecutionStore):
    """A real store that remembers each ``reserve_all`` batch, and can fail batches."""

    def __init__(self, path: Path, *, fail_batches: bool = False) -> None:
        super().__init__(path)
        self.batches: list[list[str]] = []
        self.fail_batches = fail_batches

    def reserve_all(
        self, claims: Sequence[Claim], *, durable: bool = True, log: Sequence[Event] = ()
    ) -> list[Reservation]:
        self.batches.append([c.call_id for c in claims])
        if self.fail_batches and len(claims) > 1:
            raise StoreError("the execution store could not reserve execution records")
        return super().reserve_all(claims, durable=durable, log=log)


def _batch_of_reads(tmp_path: Path, store: SqliteExecutionStore) -> tuple[Any, Counter]:
    looked = Counter()

    @tool_spec(effect="read")
    def look(i: int) -> str:
        """Read something."""
        looked.add(i)
        return f"seen {i}"

    deps = ExecutorDeps(
        registry=ToolRegistry([look]), policy=PolicyEngine(), store=store, approval_secret=SECRET
    )
    return build_executor(deps, checkpointer=InMemorySaver()), looked


def test_a_batch_reserves_its_records_in_one_transaction(tmp_path: Path) -> None:
    store = _CountingStore(tmp_path / "exec.db")
    executor, looked = _batch_of_reads(tmp_path, store)
    batch = [request("look", {"i": i}, root=tmp_path, call_id=f"c{i}") for i in range(WIDTH)]
    out = executor.invoke({"batch": batch}, config("together"))
    assert store.batches == [[f"c{i}" for i in range(WIDTH)]]
    assert sorted(looked.effects) == list(range(WIDTH))
    assert {r["status"] for r in out["results"].values()} == {"OK"}
    assert len(store.committed("run-1")) == WIDTH


def test_a_failed_batch_reservation_falls_back_to_one_per_call(tmp_path: Path) -> None:
    store = _CountingStore(tmp_path / "exec.db", fail_batches=True)
    executor, looked = _batch_of_reads(tmp_path, store)
    batch = [request("look", {"i": i}, root=tmp_path, call_id=f"c{i}") for i in range(WIDTH)]
    out = executor.invoke({"batch": batch}, config("alone"))
    assert store.batches[0] == [f"c{i}" for i in range(WIDTH)]
    assert sorted(store.batches[1:]) == [[f"c{i}"] for i in range(WIDTH)]
    assert {k: r["data"] for k, r in out["results"].items()} == {
        f"c{i}": f"seen {i}" for i in range(WIDTH)
    }
    assert sorted(looked.effects) == list(range(WIDTH))
