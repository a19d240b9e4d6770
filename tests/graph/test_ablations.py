"""The §15.1 ablations as ``build_graph`` settings, under each of the four architectures.

Each test drives real compiled graphs (real SQLite store, a scripted model recording its
inputs and the tools offered, fake tools counting what really executed) once with the
mechanism on (the default) and once with it off, and asserts on the status, the event log
and what executed: ``tools_enabled``, ``verifier_gate``, ``loop_guard``, ``context``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import Field

from execgraph.graph import Stage, build_graph
from execgraph.state.errors import UsageError
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.fake import FakeAdapter, Step
from tests.reliability.replies import call, finish, lookup, plan, save, step
from tests.support.ablations import ARCHS, STAGES, ai_turns, run_arch, task, tool_texts

ANSWER = {"kind": "output_contains", "value": "42"}  # holds without any tool


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "setting",
    [
        {"tools_enabled": "no"},
        {"verifier_gate": 1},
        {"loop_guard": None},
        {"context": "summary"},
        {"context": "FULL"},
    ],
)
def test_a_malformed_ablation_setting_is_refused_at_build(
    tmp_path: Path, setting: dict[str, Any]
) -> None:
    with pytest.raises(UsageError, match=next(iter(setting))):
        build_graph("react", model=ScriptedChatModel([]), tools=[], home=tmp_path, **setting)


def test_the_defaults_are_every_mechanism_on(tmp_path: Path) -> None:
    run_task = task(checks=[ANSWER], budgets={"model_calls": 1})
    run = run_arch(tmp_path, "react", [finish("done")], run_task)
    [verdict] = run.of_type("verifier.verdict")
    assert verdict.payload["gated"] is True and verdict.payload["accepted"] is False
    assert "gated" not in run.out["verification"]  # state's report is today's


# --------------------------------------------------------------------------- tools_enabled

_NO_TOOLS = {
    # arch: (replies, tools offered per model call, refused calls)
    "react": (
        [lookup(), finish("the answer is 42")],
        [("finish", "ask_user", "abort")] * 2,
        1,
    ),
    # each fixed stage is still asked (with nothing offered); its calls are refused
    "workflow": ([lookup(), save(), finish("42")], [(), (), ("finish",)], 2),
    # a plan naming a tool is refused (repaired within the turn); an empty plan is taken
    "plan_execute": (
        [plan(step("s1", "lookup")), plan(), finish("42")],
        [("submit_plan", "abort")] * 2 + [("finish", "revise_plan", "abort")],
        0,
    ),
    "hybrid": (
        [lookup(), finish("collected"), finish("42")],
        [("finish", "abort")] * 3,
        1,
    ),
}


@pytest.mark.parametrize("arch", ARCHS)
def test_tools_off_offers_only_control_tools_and_runs_nothing(tmp_path: Path, arch: str) -> None:
    replies, offered, refused = _NO_TOOLS[arch]
    run = run_arch(tmp_path, arch, replies, task(checks=[ANSWER]), tools_enabled=False)
    assert run.out["status"] == "COMPLETED", run.out.get("error")
    assert run.model.tools_offered == offered
    assert run.fake.call_count() == 0  # nothing really executed
    assert run.of_type("tool.started") == []
    denied = run.of_type("tool.denied")
    assert len(denied) == refused
    assert all("is not allowed here" in e.payload["message"] for e in denied)
    run.model.assert_consumed()


def test_tools_off_the_refusal_is_what_the_model_sees_next(tmp_path: Path) -> None:
    run = run_arch(
        tmp_path, "react", _NO_TOOLS["react"][0], task(checks=[ANSWER]), tools_enabled=False
    )
    [answer] = tool_texts(run.model.calls[1])
    assert "PolicyDenied" in answer and "lookup is not allowed here" in answer


class _BindingModel(ScriptedChatModel):
    """Records whether each call was sent a tool list at all."""

    bound: list[bool] = Field(default_factory=list)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        self.bound.append("tools" in kw)
        return super()._generate(messages, stop, run_manager, **kw)


def test_tools_off_a_stage_offered_nothing_calls_the_model_unbound(tmp_path: Path) -> None:
    """Some providers refuse an empty tool list: a stage with nothing to offer sends none."""
    model = _BindingModel(_NO_TOOLS["workflow"][0])
    fake = FakeAdapter()
    fake.tool("lookup", effect="read")
    fake.tool("save", effect="write")
    app = build_graph(
        "workflow",
        model=model,
        tools=fake.tools(),
        stages=STAGES,
        home=tmp_path,
        workspace=tmp_path / "ws",
        tools_enabled=False,
    )
    out = app.invoke({"task": task(checks=[ANSWER])}, {"configurable": {"thread_id": "w"}})
    assert out["status"] == "COMPLETED"
    assert model.bound == [False, False, True]  # two stages unbound, conclude offers finish


def test_tools_on_the_same_script_runs_the_tool(tmp_path: Path) -> None:
    replies = [lookup(), finish("the answer is 42")]
    run = run_arch(tmp_path, "react", replies, task(checks=[ANSWER]))
    assert run.out["status"] == "COMPLETED"
    assert run.fake.call_count("lookup") == 1 and run.of_type("tool.denied") == []
    assert {"lookup", "save"} <= set(run.model.tools_offered[0])


def test_tools_off_a_plan_naming_a_tool_is_refused_as_not_offered(tmp_path: Path) -> None:
    run = run_arch(
        tmp_path,
        "plan_execute",
        _NO_TOOLS["plan_execute"][0],
        task(checks=[ANSWER]),
        tools_enabled=False,
    )
    refused = [e for e in run.of_type("model.called") if e.payload.get("refused")]
    assert len(refused) == 1
    assert "'lookup', which is not offered: tools are off" in refused[0].payload["refused"]
    assert run.of_type("tool.requested") == []
    assert run.out["plan"]["steps"] == []


def test_tools_off_a_planner_that_insists_on_tools_fails_without_running_any(
    tmp_path: Path,
) -> None:
    replies = [plan(step("s1", "lookup"), step("s2", "save", ["s1"]))] * 3  # 1 call + 2 repairs
    run = run_arch(tmp_path, "plan_execute", replies, task(checks=[ANSWER]), tools_enabled=False)
    assert run.out["status"] == "FAILED"
    assert run.out["error"]["type"] == "ModelOutputError"
    assert run.fake.call_count() == 0 and run.of_type("tool.requested") == []


def test_tools_off_a_publish_call_asks_no_person_and_is_refused(tmp_path: Path) -> None:
    replies = [
        finish("collected"),
        finish("analyzed"),
        call("publish", {"item": "a"}),
        finish("published 42"),
    ]
    allowed = ("lookup", "save", "publish")
    run = run_arch(
        tmp_path, "hybrid", replies, task(checks=[ANSWER], allowed=allowed), tools_enabled=False
    )
    assert "__interrupt__" not in run.out and run.out["status"] == "COMPLETED"
    assert run.of_type("approval.requested") == []
    assert run.fake.call_count("publish") == 0
    [denied] = run.of_type("tool.denied")
    assert "publish is not allowed here" in denied.payload["message"]


# --------------------------------------------------------------------------- verifier_gate

_FINISH_AT_ONCE = {
    # arch: (replies, tools that really ran)
    "react": ([finish("done")], {}),
    "workflow": (
        [AIMessage("nothing to look up"), AIMessage("nothing to save"), finish("done")],
        {},
    ),
    "plan_execute": ([plan(step("s1", "lookup")), finish("done")], {"lookup": 1}),
    "hybrid": ([finish("collected"), finish("done")], {}),
}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("gate", [True, False])
def test_verifier_gate_on_judges_a_finish_off_completes_it_unjudged(
    tmp_path: Path, arch: str, gate: bool
) -> None:
    judged: list[str] = []

    def never(check: Any, view: Any, contract: Any) -> str | None:
        judged.append(contract.run_id)
        return "this check never holds"

    replies, ran = _FINISH_AT_ONCE[arch]
    run = run_arch(
        tmp_path,
        arch,
        replies,
        # the model-call budget is the script: a rejected finish cannot ask again
        task(checks=[{"kind": "never"}], budgets={"model_calls": len(replies)}),
        checks={"never": never},
        verifier_gate=gate,
    )
    [verdict] = run.of_type("verifier.verdict")
    assert verdict.payload["gated"] is gate
    assert {t: run.fake.call_count(t) for t in ran} == ran
    if gate:
        assert run.out["status"] == "BUDGET_EXHAUSTED"  # rejected, and no call left to retry
        assert verdict.payload["accepted"] is False
        assert verdict.payload["failed"] == ["this check never holds"]
        assert judged  # the checks ran
    else:
        assert run.out["status"] == "COMPLETED" and run.out["output"] == "done"
        assert verdict.payload["accepted"] is True
        assert verdict.payload["passed"] == verdict.payload["failed"] == []
        assert judged == []  # no success check ran, not even for the final report
        assert run.out["verification"]["gated"] is False
        [finished] = run.of_type("run.finished")
        assert finished.payload["status"] == "COMPLETED"


# --------------------------------------------------------------------------- loop_guard

_SAME = [Stage(f"again{i}", ("lookup",), "Look the item up.") for i in range(6)]
_REPEATS: dict[str, dict[str, Any]] = {
    # the dynamic loops repeat one read forever: the budget must end them
    "react": {"replies": [lookup()] * 30, "budgets": {"model_calls": 10, "tool_calls": 20}},
    "hybrid": {"replies": [lookup()] * 30, "budgets": {"model_calls": 10, "tool_calls": 20}},
    # the fixed paths repeat as often as their stages / plan steps say, then end on their own
    "workflow": {
        "replies": [lookup()] * 6 + [finish("done")],
        "stages": _SAME,
        "budgets": {"model_calls": 20, "tool_calls": 20},
    },
    "plan_execute": {
        "replies": [
            plan(*(step(f"s{i}", "lookup", [f"s{i - 1}"] if i else []) for i in range(6))),
            finish("done"),
        ],
        "budgets": {"model_calls": 20, "tool_calls": 20},
    },
}
_UNGUARDED = {
    "react": ("BUDGET_EXHAUSTED", 10),
    "hybrid": ("BUDGET_EXHAUSTED", 10),
    "workflow": ("COMPLETED", 6),
    "plan_execute": ("COMPLETED", 6),
}


@pytest.mark.parametrize("arch", ARCHS)
def test_loop_guard_off_repeats_run_on_until_the_budget_or_the_path_ends(
    tmp_path: Path, arch: str
) -> None:
    case = _REPEATS[arch]
    runs = {
        guarded: run_arch(
            tmp_path / str(guarded),
            arch,
            list(case["replies"]),
            task(budgets=case["budgets"]),
            stages=case.get("stages", None) or None,
            loop_guard=guarded,
        )
        for guarded in (True, False)
    }
    on, off = runs[True], runs[False]
    # with the guard: one new read, then three repeats (loop_threshold 3), and the run stops
    assert on.out["status"] == "FAILED" and "no progress" in on.out["error"]["message"]
    assert on.fake.call_count("lookup") == 4
    status, reads = _UNGUARDED[arch]
    assert off.out["status"] == status, off.out.get("error")
    assert "no progress" not in str(off.out.get("error"))
    assert off.fake.call_count("lookup") == reads
    spent_on, spent_off = on.out["budget"]["used"], off.out["budget"]["used"]
    assert spent_off["tool_calls"] > spent_on["tool_calls"]
    assert spent_off["tokens_in"] > spent_on["tokens_in"]
    if status == "BUDGET_EXHAUSTED":
        assert spent_off["model_calls"] == case["budgets"]["model_calls"]
        assert "budget exhausted" in off.out["error"]["message"]


# --------------------------------------------------------------------------- context

_PAGE = 5000  # beyond observation_chars (2000) and the evidence value cut (120)


def _page(i: int) -> str:
    return f"page {i} " + "x" * _PAGE + f" END-{i}"


_BIG_READS = {
    "react": [lookup(f"p{i}") for i in range(3)] + [finish("done")],
    "workflow": [lookup("p0"), save(), finish("done")],
    "plan_execute": [plan(step("s1", "lookup")), finish("done")],
    "hybrid": [lookup("p0"), finish("collected"), save(), finish("done")],
}


@pytest.mark.parametrize("arch", ARCHS)
def test_full_context_carries_whole_observations_and_costs_more_input(
    tmp_path: Path, arch: str
) -> None:
    pages = [Step(data={"text": _page(i)}) for i in range(3)]
    runs = {
        mode: run_arch(
            tmp_path / mode,
            arch,
            list(_BIG_READS[arch]),
            task(budgets={"model_calls": 20, "tool_calls": 20}),
            lookup=pages,
            context=mode,
        )
        for mode in ("projected", "full")
    }
    projected, full = runs["projected"], runs["full"]
    for run in (projected, full):
        assert run.out["status"] == "COMPLETED", run.out.get("error")
        run.model.assert_consumed()
    last_full, last_projected = full.inputs_text()[-1], projected.inputs_text()[-1]
    assert "END-0" in last_full and "END-0" not in last_projected
    assert len(full.model.calls) == len(projected.model.calls)  # same decisions
    assert full.tokens_in > projected.tokens_in  # so more input tokens per decision
    for later in range(1, len(full.model.calls)):
        assert len(full.inputs_text()[later]) >= len(projected.inputs_text()[later])


def test_full_context_carries_every_turn_beyond_state_windows(tmp_path: Path) -> None:
    """22 turns: more than ``history_turns`` (8) and than state keeps (16 turns, 16
    results), so the early turns come back from the run's record, refusal included."""
    reads = [lookup(f"p{i}") for i in range(18)]
    replies = [call("publish", {"item": "a"}), finish("too early"), *reads, save(), finish("done")]
    checks = [{"kind": "tool_succeeded", "target": "save"}]
    pages = [Step(data={"text": _page(i)}) for i in range(18)]
    budgets = {"model_calls": 30, "tool_calls": 30}
    runs = {
        mode: run_arch(
            tmp_path / mode,
            "react",
            list(replies),
            task(checks=checks, budgets=budgets),
            lookup=pages,
            context=mode,
            loop_guard=False,
        )
        for mode in ("projected", "full")
    }
    for run in runs.values():
        assert run.out["status"] == "COMPLETED", run.out.get("error")
    projected = runs["projected"].model.calls[-1]
    full = runs["full"].model.calls[-1]
    assert len(ai_turns(projected)) == 8
    assert len(ai_turns(full)) == 21  # every turn before the last
    answers = tool_texts(full)
    assert "publish is not allowed here" in answers[0]  # refused before any record existed
    assert answers[1].startswith("finish rejected")
    for i in range(18):
        assert f"END-{i}" in answers[2 + i]
    assert runs["full"].tokens_in > runs["projected"].tokens_in
