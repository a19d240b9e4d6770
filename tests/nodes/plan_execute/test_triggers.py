"""Plan-and-execute replans on a trigger once per cause, through the compiled graph.

Each scenario is a scripted model (plans and a finish) over small tools whose evidence the
test controls: contrary evidence, an evidence gap, tool-call spending counted per plan
version, a source that changes under the plan, and a goal the user changes between waves.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.contracts import Evidence
from execgraph.state.errors import PermanentError, StateGuardMismatch
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import AdapterOutput, tool_spec

_ids = itertools.count()


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{next(_ids)}"}])


def plan(*steps: dict[str, Any]) -> AIMessage:
    return call("submit_plan", {"steps": list(steps)})


def finish(text: str) -> AIMessage:
    return call("finish", {"output": text})


def step(sid: str, tool: str, after: tuple[str, ...] = (), **kw: Any) -> dict[str, Any]:
    success = kw.pop("success", None)
    out = {"id": sid, "tool": tool, "arguments": kw, "depends_on": list(after)}
    return {**out, "success": success} if success else out


def _app(tmp_path: Path, replies: list[Any], tools: list[Any]) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(replies)
    app = build_graph(
        "plan_execute",
        model=model,
        tools=tools,
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app, model


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _prompt(model: ScriptedChatModel, index: int) -> str:
    return "\n".join(str(m.content) for m in model.calls[index])


# --------------------------------------------------------------------------- contrary evidence

MIRRORS = {"a": "Paris", "b": "Lyon", "c": "Paris", "d": "Nice"}


@tool_spec(effect="read")
def ask(mirror: str) -> AdapterOutput:
    """Ask a mirror which city is the capital (all mirrors report revision 1)."""
    value = MIRRORS[mirror]
    ev = Evidence(source_id="fact:capital", kind="capital", value=value, version=1)
    return AdapterOutput(data=value, evidence=(ev,))


CAPITAL_TASK = {
    "goal": "Name the capital.",
    "success_checks": [
        {"kind": "evidence", "target": "capital"},
        {"kind": "output_contains", "value": "Paris"},
    ],
}


def test_contrary_evidence_replans_once_and_agreeing_evidence_completes(tmp_path: Path) -> None:
    replies = [
        plan(step("s1", "ask", mirror="a"), step("s2", "ask", mirror="b")),
        plan(step("s3", "ask", mirror="c")),
        finish("Paris"),
    ]
    app, model = _app(tmp_path, replies, [ask])
    out = app.invoke({"task": CAPITAL_TASK}, _cfg("contrary"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["replans"] == 1 and out["plan"]["version"] == 2
    assert out["plan"]["why"].startswith("contrary evidence")
    assert "observed by steps s1, s2" in _prompt(model, 1)  # which steps disagree
    assert [s["id"] for s in out["plan"]["steps"]] == ["s1", "s2", "s3"]


def test_a_new_conflict_after_a_replan_is_a_new_cause(tmp_path: Path) -> None:
    replies = [
        plan(step("s1", "ask", mirror="a"), step("s2", "ask", mirror="b")),
        plan(step("s3", "ask", mirror="d")),  # a third value: new contrary evidence
        plan(step("s4", "ask", mirror="c")),
        finish("Paris"),
    ]
    app, model = _app(tmp_path, replies, [ask])
    out = app.invoke({"task": CAPITAL_TASK}, _cfg("contrary-again"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["replans"] == 2 and out["plan"]["why"].startswith("contrary evidence")


# --------------------------------------------------------------------------- evidence gap


@tool_spec(effect="read")
def search(query: str) -> AdapterOutput:
    """Search; yields snippets, never a citation."""
    ev = Evidence(source_id=f"search:{query}", kind="snippet", value="a snippet")
    return AdapterOutput(data="a snippet", evidence=(ev,))


@tool_spec(effect="read")
def fetch_page(url: str) -> AdapterOutput:
    """Fetch a page."""
    ev = Evidence(source_id=f"page:{url}", kind="page", value="the page")
    return AdapterOutput(data="the page", evidence=(ev,))


def test_an_evidence_gap_replans_once_and_the_new_plans_evidence_completes(
    tmp_path: Path,
) -> None:
    replies = [
        plan(step("s1", "search", query="q", success="citation")),
        plan(step("s2", "fetch_page", url="u", success="page")),
        finish("the page says so"),
    ]
    app, model = _app(tmp_path, replies, [search, fetch_page])
    task = {"goal": "Cite a page.", "success_checks": [{"kind": "evidence", "target": "page"}]}
    out = app.invoke({"task": task}, _cfg("gap"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["replans"] == 1
    assert out["plan"]["why"] == "evidence gap: step s1 produced no citation evidence"


# --------------------------------------------------------------------------- budget deviation


@tool_spec(effect="read")
def read_index() -> AdapterOutput:
    """Read the index (it does not change)."""
    ev = Evidence(source_id="doc:index", kind="index", value="index")
    return AdapterOutput(data="index", evidence=(ev,))


@tool_spec(effect="read")
def broken(i: int) -> str:
    """Always fails (a typed failure: a bug would stop the run)."""
    raise PermanentError(f"broken {i}")


def test_tool_calls_are_measured_against_the_current_plan_version(tmp_path: Path) -> None:
    failing = [step(f"f{i}", "broken", i=i) for i in range(3)]
    again = [step(f"g{i}", "broken", i=i) for i in range(3, 6)]
    replies = [plan(*failing), plan(*again), plan(step("ok", "read_index")), finish("index")]
    app, model = _app(tmp_path, replies, [broken, read_index])
    task = {"goal": "Read.", "success_checks": [{"kind": "tool_succeeded", "target": "read_index"}]}
    out = app.invoke({"task": task}, _cfg("budget"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["replans"] == 2 and out["plan"]["why"].startswith("dependency failed")
    assert out["budget"]["used"]["tool_calls"] == 7  # 6 failed calls of earlier versions


# --------------------------------------------------------------------------- environment changed

REVISIONS: list[int] = []


@tool_spec(effect="read")
def read_spec() -> AdapterOutput:
    """Read the spec document; someone else edits it between our reads."""
    revision = REVISIONS.pop(0)
    ev = Evidence(source_id="doc:spec", kind="spec", value=f"rev {revision}", version=revision)
    return AdapterOutput(data=f"rev {revision}", evidence=(ev,))


def test_a_source_changed_under_the_plan_replans_the_steps_that_saw_the_old_state(
    tmp_path: Path,
) -> None:
    REVISIONS[:] = [1, 2, 2]
    replies = [
        plan(
            step("s1", "read_spec"),
            step("s2", "read_index"),
            step("s3", "read_spec", ("s1", "s2")),
        ),
        plan(step("s4", "read_spec", ("s2",))),
        finish("spec rev 2"),
    ]
    app, model = _app(tmp_path, replies, [read_spec, read_index])
    task = {"goal": "Read the spec.", "success_checks": [{"kind": "evidence", "target": "spec"}]}
    out = app.invoke({"task": task}, _cfg("env"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["replans"] == 1
    why = out["plan"]["why"]
    assert why.startswith("environment changed: step s1") and "version 2" in why
    # s1 saw revision 1: its observation is out of date and it is re-planned; s2 and s3 stay.
    assert [s["id"] for s in out["plan"]["steps"]] == ["s2", "s3", "s4"]
    assert "out of date" in _prompt(model, 1) and "step s1" in _prompt(model, 1)
    assert out["evidence"]["doc:spec"]["version"] == 2


def test_our_own_write_to_a_source_is_not_an_environment_change(tmp_path: Path) -> None:
    REVISIONS[:] = [1]

    @tool_spec(effect="write")
    def edit_spec() -> AdapterOutput:
        """Edit the spec (a committed write, read back as revision 2)."""
        ev = Evidence(source_id="doc:spec", kind="spec", value="rev 2", version=2)
        return AdapterOutput(data="edited", committed=True, evidence=(ev,))

    replies = [
        plan(step("s1", "read_spec"), step("s2", "edit_spec", ("s1",))),
        finish("edited to rev 2"),
    ]
    app, model = _app(tmp_path, replies, [read_spec, edit_spec])
    task = {"goal": "Edit the spec.", "success_checks": [{"kind": "evidence", "target": "spec"}]}
    out = app.invoke({"task": task}, _cfg("own-write"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["version"] == 1


def test_a_re_read_stamped_newer_with_the_same_value_is_not_a_change(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def read_stamped() -> AdapterOutput:
        """Read a document that does not change; each observation is stamped with the time."""
        ev = Evidence(source_id="doc:stamped", kind="doc", value="same", version=time.time_ns())
        return AdapterOutput(data="same", evidence=(ev,))

    replies = [
        plan(step("s1", "read_stamped"), step("s2", "read_stamped", ("s1",))),
        finish("same"),
    ]
    app, model = _app(tmp_path, replies, [read_stamped])
    out = app.invoke({"task": {"goal": "Read twice."}}, _cfg("re-read"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["version"] == 1


def test_a_step_that_reports_a_changed_target_is_an_environment_change(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def guarded_read() -> str:
        """Read a record only if it is still the one planned against."""
        raise StateGuardMismatch("the record changed since it was read")

    replies = [
        plan(step("s1", "guarded_read")),
        plan(step("s2", "read_index")),
        finish("index"),
    ]
    app, model = _app(tmp_path, replies, [guarded_read, read_index])
    out = app.invoke({"task": {"goal": "Read."}}, _cfg("env-guard"))
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["plan"]["why"].startswith("environment changed: step s1 (guarded_read)")


# --------------------------------------------------------------------------- goal changed

NOTES: list[str] = []


@tool_spec(effect="write")
def note(text: str) -> AdapterOutput:
    """Append a note to an outside log (a committed side effect)."""
    NOTES.append(text)
    return AdapterOutput(data="noted", committed=True)


def test_a_goal_changed_between_waves_replaces_the_plan_and_keeps_side_effects(
    tmp_path: Path,
) -> None:
    NOTES.clear()
    replies = [
        plan(step("s1", "note", text="draft"), step("s2", "ask", ("s1",), mirror="b")),
        plan(step("s3", "ask", mirror="a")),
        finish("Paris"),
    ]
    app, model = _app(tmp_path, replies, [note, ask])
    cfg = _cfg("goal")
    first = {"goal": "Log a draft and name the second city.", "success_checks": []}
    paused = app.invoke({"task": first}, cfg, interrupt_before=["assess"])
    assert paused["status"] == "RUNNING" and NOTES == ["draft"]
    app.update_state(cfg, {"task": CAPITAL_TASK})  # the user changes the goal while paused
    out = app.invoke(None, cfg)
    model.assert_consumed()
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["contract"]["goal"] == "Name the capital."
    assert out["plan"]["version"] == 2 and out["plan"]["why"].startswith("goal changed")
    assert [s["id"] for s in out["plan"]["steps"]] == ["s1", "s3"]  # s2 was for the old goal
    assert NOTES == ["draft"]  # the side effect happened once and stays on record
    [noted] = [r for r in out["results"].values() if r["tool_name"] == "note"]
    assert noted["side_effect"]["committed"] is True
    assert "Name the capital." in _prompt(model, 1) and "step s1" in _prompt(model, 1)
    store = SqliteExecutionStore(tmp_path / "exec.db")
    admitted = [e for e in store.events("goal") if e.type == EventType.RUN_ADMITTED]
    assert [e.payload["goal"] for e in admitted] == [first["goal"], "Name the capital."]


def test_an_updated_task_that_admission_refuses_fails_the_run(tmp_path: Path) -> None:
    replies = [plan(step("s1", "ask", mirror="a"), step("s2", "ask", ("s1",), mirror="c"))]
    app, model = _app(tmp_path, replies, [ask])
    cfg = _cfg("goal-bad")
    app.invoke({"task": CAPITAL_TASK}, cfg, interrupt_before=["assess"])
    app.update_state(cfg, {"task": {**CAPITAL_TASK, "allowed_actions": ["launch"]}})
    out = app.invoke(None, cfg)
    model.assert_consumed()
    assert out["status"] == "FAILED"
    assert "updated task was not admitted" in out["error"]["message"]
    assert out["contract"]["goal"] == "Name the capital."


def test_an_unchanged_task_is_not_a_trigger(tmp_path: Path) -> None:
    replies = [plan(step("s1", "ask", mirror="a"), step("s2", "ask", ("s1",), mirror="c"))]
    app, model = _app(tmp_path, [*replies, finish("Paris")], [ask])
    cfg = _cfg("goal-same")
    app.invoke({"task": CAPITAL_TASK}, cfg, interrupt_before=["assess"])
    app.update_state(cfg, {"task": dict(CAPITAL_TASK)})
    out = app.invoke(None, cfg)
    model.assert_consumed()
    assert out["status"] == "COMPLETED" and out["plan"]["version"] == 1
