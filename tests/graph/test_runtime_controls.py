"""Runtime control across architectures: admission, budgets, loop guard, repair, waiting."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.nodes.cancel import request_cancel
from execgraph.state.errors import ToolCancelled
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import AdapterOutput, InvokeContext, tool_spec
from execgraph.tools.adapters import FileAdapter
from tests.support.executor import Counter


def call(name: str, args: dict[str, Any], i: int | str = 0) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


def calls(*items: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"{n}-{k}"} for k, (n, a) in enumerate(items)],
    )


def _app(
    tmp_path: Path, arch: str, replies: list[Any], tools: list[Any] | None = None, **kw: Any
) -> tuple[Any, ScriptedChatModel]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    for i in range(5):
        (ws / f"page{i}.txt").write_text(f"page {i}")
    model = ScriptedChatModel(replies)
    app = build_graph(
        arch,
        model=model,
        tools=tools or [FileAdapter(ws)],
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
        **kw,
    )
    return app, model


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --------------------------------------------------------------------------- admission


@pytest.mark.parametrize(
    ("task", "reason"),
    [
        ({"goal": "x", "allowed_actions": ["launch_missiles"]}, "not registered"),
        ({"goal": "x", "budgets": {"model_calls": 0}}, "budgets must be positive"),
        ({"goal": "x", "success_checks": [{"kind": "vibes"}]}, "unknown kind"),
        ({"goal": ""}, "malformed"),
        ({"goal": "x", "colour": "blue"}, "malformed"),
        ({"goal": "x", "approval_rules": [{"decision": "bogus"}]}, "approval_rules: "),
    ],
)
def test_admission_rejects_without_a_model_call(
    tmp_path: Path, task: dict[str, Any], reason: str
) -> None:
    app, model = _app(tmp_path, "react", [])
    out = app.invoke({"task": task}, _cfg())
    assert out["status"] == "FAILED" and reason in out["error"]["message"]
    assert model.calls == []  # rejected before any model call


# --------------------------------------------------------------------------- budgets


def test_model_call_budget_stops_at_the_exact_count(tmp_path: Path) -> None:
    replies = [call("read_file", {"path": f"page{i}.txt"}, i) for i in range(5)]
    app, model = _app(tmp_path, "react", replies)
    out = app.invoke({"task": {"goal": "read forever", "budgets": {"model_calls": 3}}}, _cfg())
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["model_calls"] == 3 and len(model.calls) == 3
    assert out["budget"]["used"]["tool_calls"] == 3
    assert "Confirmed so far" in out["output"]  # the partial result is delivered


def test_tool_call_budget_is_reserved_per_batch_and_never_overshot(tmp_path: Path) -> None:
    batch = calls(*[("read_file", {"path": f"page{i}.txt"}) for i in range(3)])
    replies = [call("read_file", {"path": "page4.txt"}), batch]
    app, model = _app(tmp_path, "react", replies)
    out = app.invoke({"task": {"goal": "read", "budgets": {"tool_calls": 3}}}, _cfg())
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["tool_calls"] == 1  # the batch of 3 did not fit the 2 left
    assert len(out["results"]) == 1 and "does not fit" in out["error"]["message"]
    model.assert_consumed()


def test_token_budget_counts_model_usage(tmp_path: Path) -> None:
    replies = [call("read_file", {"path": f"page{i}.txt"}, i) for i in range(5)]
    app, model = _app(tmp_path, "react", replies)
    out = app.invoke({"task": {"goal": "read", "budgets": {"tokens_in": 1}}}, _cfg())
    assert out["status"] == "BUDGET_EXHAUSTED" and len(model.calls) == 1
    assert out["budget"]["used"]["tokens_in"] > 1


# --------------------------------------------------------------------------- loop guard


def test_loop_guard_stops_repeats_without_progress(tmp_path: Path) -> None:
    same = [call("read_file", {"path": "page0.txt"}, i) for i in range(6)]
    app, model = _app(tmp_path, "react", same, loop_threshold=3)
    out = app.invoke({"task": {"goal": "loop"}}, _cfg())
    assert out["status"] == "FAILED" and "no progress" in out["error"]["message"]
    assert len(model.calls) == 4  # one new turn, then three repeats
    model_left = model.remaining
    assert model_left == 2


def test_paging_and_polling_are_not_repeats(tmp_path: Path) -> None:
    ticks = itertools.count()

    @tool_spec
    def poll_job(job: str) -> str:
        """Poll a job; its status changes over time."""
        return f"progress {next(ticks)}"

    replies = [call("poll_job", {"job": "j1"}, i) for i in range(5)]
    replies += [call("read_file", {"path": f"page{i}.txt"}, f"p{i}") for i in range(3)]
    replies.append(call("finish", {"output": "done"}))
    ws = tmp_path / "ws"
    app, model = _app(
        tmp_path, "react", replies, tools=[poll_job, FileAdapter(ws)], loop_threshold=2
    )
    out = app.invoke({"task": {"goal": "poll then page"}}, _cfg())
    assert out["status"] == "COMPLETED", out.get("error")
    model.assert_consumed()


# --------------------------------------------------------------------------- repair, waiting


def _malformed(i: int) -> AIMessage:
    return AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "read_file", "args": '{"path": "page0', "id": f"bad-{i}", "error": "json"}
        ],
    )


def test_malformed_output_gets_bounded_counted_repairs(tmp_path: Path) -> None:
    replies = [
        _malformed(0),
        call("read_file", {"path": "page0.txt"}),
        call("finish", {"output": "page 0"}),
    ]
    app, model = _app(tmp_path, "react", replies)
    out = app.invoke({"task": {"goal": "read page0"}}, _cfg())
    assert out["status"] == "COMPLETED"
    assert out["budget"]["used"]["model_calls"] == 3  # the repair call is counted
    repair_input = model.calls[1][-1].content
    assert "malformed" in repair_input


def test_malformed_output_beyond_the_limit_fails_typed(tmp_path: Path) -> None:
    app, model = _app(tmp_path, "react", [_malformed(i) for i in range(3)], max_repairs=2)
    out = app.invoke({"task": {"goal": "read"}}, _cfg())
    assert out["status"] == "FAILED" and out["error"]["type"] == "ModelOutputError"
    assert out["budget"]["used"]["model_calls"] == 3
    model.assert_consumed()


def test_ask_user_waits_then_resumes_with_the_answer(tmp_path: Path) -> None:
    replies = [
        call("ask_user", {"question": "Which page?"}),
        call("read_file", {"path": "page2.txt"}),
        call("finish", {"output": "page 2"}),
    ]
    app, model = _app(tmp_path, "react", replies)
    out = app.invoke({"task": {"goal": "read the page the user wants"}}, _cfg())
    assert out["status"] == "WAITING"
    [pause] = out["__interrupt__"]
    assert pause.value["question"] == "Which page?"
    out = app.invoke(Command(resume={"answer": "page 2"}), _cfg())
    assert out["status"] == "COMPLETED"
    tool_messages = [m for m in model.calls[1] if m.type == "tool"]
    assert any("page 2" in str(m.content) for m in tool_messages)


def test_approval_pause_shows_waiting(tmp_path: Path) -> None:
    published = Counter()

    @tool_spec(effect="irreversible")
    def publish(doc: str) -> str:
        """Publish a document."""
        published.add(doc)
        return "ok"

    replies = [call("publish", {"doc": "r.md"}), call("finish", {"output": "published"})]
    app, _ = _app(tmp_path, "react", replies, tools=[publish])
    task = {"goal": "publish", "success_checks": [{"kind": "tool_succeeded", "target": "publish"}]}
    out = app.invoke({"task": task}, _cfg())
    assert out["status"] == "WAITING" and len(published) == 0
    out = app.invoke(Command(resume={"action": "approve"}), _cfg())
    assert out["status"] == "COMPLETED" and published.effects == ["r.md"]


# --------------------------------------------------------------------------- parallel plan


def test_plan_steps_run_concurrently_and_merge_evidence(tmp_path: Path) -> None:
    barrier = threading.Barrier(3, timeout=20)

    @tool_spec
    def fetch(source: str) -> AdapterOutput:
        """Fetch a source; three fetches must be in flight together to pass the barrier."""
        barrier.wait()  # raises BrokenBarrierError if the steps ran one after another
        from execgraph.state.contracts import Evidence

        ev = Evidence(source_id=f"src:{source}", kind="fetched", value=source.upper())
        return AdapterOutput(data=source, evidence=(ev,))

    steps = [{"id": f"s{i}", "tool": "fetch", "arguments": {"source": f"doc{i}"}} for i in range(3)]
    replies = [call("submit_plan", {"steps": steps}), call("finish", {"output": "fetched 3"})]
    app, model = _app(tmp_path, "plan_execute", replies, tools=[fetch])
    task = {
        "goal": "fetch three sources",
        "success_checks": [{"kind": "evidence", "target": "fetched"}],
    }
    out = app.invoke({"task": task}, _cfg())
    assert out["status"] == "COMPLETED", out.get("error")
    assert all(r["outcome"] == "succeeded" for r in out["results"].values())
    assert sorted(out["evidence"]) == ["src:doc0", "src:doc1", "src:doc2"]
    assert out["budget"]["used"]["tool_calls"] == 3
    model.assert_consumed()


def test_plan_replans_when_a_dependency_fails(tmp_path: Path) -> None:
    bad = [
        {"id": "a", "tool": "read_file", "arguments": {"path": "missing.txt"}},
        {"id": "b", "tool": "read_file", "arguments": {"path": "page1.txt"}, "depends_on": ["a"]},
    ]
    good = [{"id": "c", "tool": "read_file", "arguments": {"path": "page1.txt"}}]
    replies = [
        call("submit_plan", {"steps": bad}),
        call("submit_plan", {"steps": good}, 1),
        call("finish", {"output": "page 1"}),
    ]
    app, model = _app(tmp_path, "plan_execute", replies)
    out = app.invoke({"task": {"goal": "read page 1"}}, _cfg())
    assert out["status"] == "COMPLETED"
    assert out["plan"]["version"] == 2 and "dependency failed" in out["plan"]["why"]
    replan_prompt = str(model.calls[1][1].content)
    assert "Replanning because: dependency failed" in replan_prompt


# --------------------------------------------------------------------------- cancellation


def test_cancel_request_stops_a_running_tool_and_the_run(tmp_path: Path) -> None:
    started, stopped = threading.Event(), threading.Event()

    @tool_spec(effect="read")
    def watch(topic: str, ctx: InvokeContext) -> str:
        """Watch a topic until cancelled."""
        started.set()
        if ctx.cancel.wait(60):
            stopped.set()
            raise ToolCancelled("stopped watching")
        return "timeout"

    store = SqliteExecutionStore(tmp_path / "exec.db")
    model = ScriptedChatModel([call("watch", {"topic": "x"})])
    app = build_graph(
        "react",
        model=model,
        tools=[watch],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    outcome: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: outcome.update(app.invoke({"task": {"goal": "watch"}}, _cfg("c")))
    )
    runner.start()
    assert started.wait(30)
    assert request_cancel(store, "c", "user pressed stop")  # as another process would
    runner.join(60)
    assert stopped.is_set() and outcome["status"] == "CANCELLED"
    [result] = outcome["results"].values()
    assert result["outcome"] == "cancelled"
