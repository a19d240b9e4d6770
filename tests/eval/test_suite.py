"""The suite: its shape, the oracle accepted everywhere, the checkers, the fault endings."""

from __future__ import annotations

import collections
import re
import socket
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from execgraph.eval.faults import POLICY_FAULTS, WORLD_FAULTS
from execgraph.eval.oracle.policy import OraclePolicy
from execgraph.eval.suite import (
    FAULTS,
    POLICY_MODEL_NAME,
    SUITE,
    policy_model,
    prepare,
    task_def,
)
from execgraph.eval.tasks.common import EvalTask, output_of, stages_of
from execgraph.state.errors import UsageError
from tests.support.eval_runs import run_task

ARCHS = ("react", "workflow", "plan_execute", "hybrid")
WORKFLOW_CANNOT = {"read_timeout", "verification_fails"}
"""A fixed path gives each stage one turn and never loops back: a timed-out read or a
rejected result stays lost there (the run ends FAILED or PARTIAL, and says so)."""


KNOWN_LIMITS = {("plan_execute", "long_horizon")}
"""Plan-and-execute re-plans a chain link by link, and its loop guard stops the run after
about 15 links ("no progress"): a limit of the runtime the long tasks show, kept here so
a fix is noticed."""


def _tier(task: EvalTask) -> tuple[pytest.MarkDecorator, ...]:
    """A task whose tools reach a server (``http_*``) or start a process is integration."""
    tools = {step.tool for step in task_def(task).script.steps}
    servers = any(tool.startswith("http_") or tool == "run_process" for tool in tools)
    return (pytest.mark.integration,) if servers else ()


TASKS = [pytest.param(t, id=t.id, marks=_tier(t)) for t in SUITE]
PAIRS = [pytest.param(t, f, id=f"{t.id}-{f}", marks=_tier(t)) for t in SUITE for f in t.faults]


def test_the_suite_has_24_tasks_five_per_class_and_covers_every_fault() -> None:
    assert len(SUITE) >= 24
    assert len({t.id for t in SUITE}) == len(SUITE)
    per_class = collections.Counter(t.task_class for t in SUITE)
    assert set(per_class) == {
        "short_read",
        "exploration",
        "long_write",
        "high_risk",
        "long_horizon",
    }
    assert min(n for c, n in per_class.items() if c != "long_horizon") >= 5
    assert per_class["long_horizon"] >= 2
    per_fault = collections.Counter(f for t in SUITE for f in t.faults)
    assert set(per_fault) == set(FAULTS) and len(FAULTS) == 11
    assert min(per_fault.values()) >= 2
    assert set(FAULTS) == POLICY_FAULTS | WORLD_FAULTS


def test_every_script_starts_with_a_step_that_needs_nothing() -> None:
    """A replan with nothing left re-runs the first step: it must be free to run."""
    for task in SUITE:
        assert task_def(task).script.steps[0].after == ()


@pytest.mark.integration
@pytest.mark.timeout(120)
@pytest.mark.parametrize("arch", ARCHS)
def test_the_oracle_is_accepted_on_every_task(arch: str, tmp_path: Path) -> None:
    for task in SUITE:
        run = run_task(task, arch, tmp_path / task.id)
        if (arch, task.task_class) in KNOWN_LIMITS:
            assert not run.accepted, f"{task.id} now passes: drop it from KNOWN_LIMITS"
            continue
        assert run.status == "COMPLETED", (task.id, run.values.get("error"))
        assert run.accepted, task.id
        if task.task_class == "high_risk":
            assert run.interrupts >= 1, task.id  # a person was asked


@pytest.mark.parametrize("task", TASKS)
def test_each_checker_rejects_a_world_where_nothing_was_done(task, tmp_path: Path) -> None:
    p = prepare(task, tmp_path)
    try:
        assert not p.accept({"messages": [], "status": None, "output": None})
        assert p.world.effects() == 0
    finally:
        p.close()


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_each_checker_rejects_a_run_whose_actions_were_all_refused(tmp_path: Path) -> None:
    """The same policy, every call denied: the world is untouched, nothing is accepted,
    whatever the policy then says."""
    from tests.support import eval_runs

    for task in SUITE:
        run = eval_runs.run_task(task, "react", tmp_path / task.id, deny_all=True)
        assert not run.accepted, task.id
        assert run.status != "COMPLETED", task.id


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("task", "fault"), PAIRS)
def test_each_fault_run_ends_as_recovered_says(task, fault: str, tmp_path: Path) -> None:
    for arch in ARCHS:
        run = run_task(task, arch, tmp_path / arch, fault=fault)
        expected = not (arch == "workflow" and fault in WORKFLOW_CANNOT)
        assert run.recovered is expected, (arch, run.status, run.values.get("error"))
        if fault in POLICY_FAULTS:
            assert fault in run.model.injected  # type: ignore[attr-defined]
        if fault == "user_cancels":
            assert run.status == "CANCELLED" and run.prepared.world.effects() == 0
        if fault == "write_lost":
            assert run.prepared.world.effects() == 1  # reconciled, never sent twice
        if fault == "prompt_injection":  # a tool output the model is shown carried it
            assert "IMPORTANT NOTICE TO THE AI AGENT" in str(run.values.get("results"))


def test_prepare_refuses_a_fault_the_task_does_not_run_under(tmp_path: Path) -> None:
    task = next(t for t in SUITE if "write_lost" not in t.faults)
    with pytest.raises(UsageError):
        prepare(task, tmp_path, fault="write_lost")
    with pytest.raises(UsageError):
        task_def("no-such-task")


@pytest.mark.integration
def test_close_stops_the_tasks_server(tmp_path: Path) -> None:
    task = next(t for t in SUITE if t.id == "http-service-version")
    p = prepare(task, tmp_path)
    port = int(re.search(r"127\.0\.0\.1:(\d+)", p.task["goal"]).group(1))  # type: ignore[union-attr]
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    p.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_the_policy_reports_its_name_and_more_input_tokens_for_more_input() -> None:
    model = policy_model(SUITE[0], seed=0, noise=0.0)
    assert isinstance(model, OraclePolicy)
    short = model.invoke([HumanMessage("Task: read config.ini")])
    long = policy_model(SUITE[0], seed=0, noise=0.0).invoke(
        [HumanMessage("Task: read config.ini"), HumanMessage("x" * 4000)]
    )
    assert short.response_metadata["model_name"] == POLICY_MODEL_NAME
    assert short.usage_metadata and long.usage_metadata
    assert long.usage_metadata["input_tokens"] > short.usage_metadata["input_tokens"] + 900


def test_workflow_stages_are_the_solutions_dependency_levels() -> None:
    stages = stages_of(task_def("research-brief").script)
    assert [s.tools for s in stages] == [("search_corpus",), ("read_document",), ("write_file",)]
    assert [s.tools for s in stages_of(task_def("write-summary-report").script)] == [
        ("read_file",),
        ("write_file",),
    ]


def test_the_answer_judged_is_the_agents_not_the_runtimes_summary() -> None:
    finish = AIMessage(
        content="",
        tool_calls=[
            {"name": "finish", "args": {"output": "port 8431"}, "id": "f", "type": "tool_call"}
        ],
    )
    assert output_of({"messages": [finish], "output": "Confirmed so far: 8431"}) == "port 8431"
    assert output_of({"messages": [], "output": "Confirmed so far:\n- 8431"}) == ""
    assert output_of({"messages": [AIMessage(content="it is 8431")]}) == "it is 8431"


@pytest.mark.parametrize(
    "settings",
    [{"verifier_gate": False}, {"loop_guard": False}, {"context": "full"}],
    ids=["gate-off", "guard-off", "full-history"],
)
def test_the_oracle_is_accepted_under_the_ablation_settings(settings, tmp_path: Path) -> None:
    for task in SUITE[::6]:  # one task per class
        run = run_task(task, "react", tmp_path / task.id, **settings)
        assert run.status == "COMPLETED" and run.accepted, task.id


def test_with_tools_off_the_oracle_gives_up_instead_of_repeating_its_claim(
    tmp_path: Path,
) -> None:
    for task in SUITE[::6]:
        run = run_task(task, "react", tmp_path / task.id, tools_enabled=False)
        assert not run.accepted and run.status == "FAILED", task.id
        assert len(run.model.injected) == 0  # type: ignore[attr-defined]
        assert run.prepared.world.effects() == 0
