"""``advance``: what a run gets next, decided in one place (the embedded engine, the
Temporal activity and a Python caller all go through it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.demo.build import demo_task
from execgraph.demo.register import register_demo
from execgraph.engines.advance import Step, advance, next_input
from execgraph.engines.answers import approve
from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import CANCELLED, RunSpec
from execgraph.state.errors import UsageError


@dataclass
class _Interrupt:
    id: str
    value: Any


@dataclass
class _State:
    values: dict[str, Any] = field(default_factory=dict)
    interrupts: tuple[Any, ...] = ()
    next: tuple[str, ...] = ()


APPROVAL = {"kind": "approval", "call_id": "t1.c0", "tool": "pay"}
TASK = {"goal": "g"}


def test_a_run_never_started_gets_its_task() -> None:
    assert next_input(_State(), Step(task=TASK)) == {"task": TASK}
    assert next_input(_State(), Step(task=TASK, cancel="stop")) == {"task": TASK}
    with pytest.raises(UsageError, match="no task was given"):
        next_input(_State(), Step())


def test_a_paused_run_gets_only_answers_naming_what_it_waits_on() -> None:
    paused = _State({"status": "WAITING"}, (_Interrupt("i1", APPROVAL),), ("executor",))
    resumed = next_input(paused, Step(answers={"i1": {"action": "approve"}}))
    assert isinstance(resumed, Command) and resumed.resume == {"i1": {"action": "approve"}}
    stays = [Step(), Step(answers={}), Step(answers={"i0": {"action": "approve"}})]
    assert all(next_input(paused, s) is next_input(paused, Step()) for s in stays)
    assert next_input(paused, Step()) is not None  # staying is not "continue"


def test_a_cancel_refuses_what_a_paused_run_waits_on() -> None:
    question = {"kind": "question", "question": "which?"}
    paused = _State({"status": "WAITING"}, (_Interrupt("a", APPROVAL), _Interrupt("q", question)))
    refused = next_input(paused, Step(cancel="stop"))
    assert refused.resume == {
        "a": {"action": "reject", "reason": CANCELLED, "approver": "execgraph cancel"},
        "q": {"answer": f"({CANCELLED})"},
    }


def test_an_ended_run_stays_and_a_killed_one_continues() -> None:
    ended = next_input(_State({"status": "COMPLETED"}), Step(task=TASK))
    assert ended is next_input(_State({"status": "FAILED"}), Step(cancel="x"))
    killed = _State({"status": "RUNNING"}, (), ())
    assert next_input(killed, Step(task=TASK)) is None
    between = _State({"status": "COMPLETED"}, (), ("verify",))  # scheduled: not over yet
    assert next_input(between, Step()) is None


def test_advance_drives_a_real_run_through_its_pause(tmp_path: Path) -> None:
    graphs = register_demo(Graphs())
    spec = RunSpec("adv-1", demo_task())
    graph = graphs.build(spec, workspace=tmp_path / "ws", home=tmp_path)
    seen: list[str] = []
    paused = advance(graph, "adv-1", Step(task=spec.task), watch=lambda mode, _: seen.append(mode))
    assert paused.status == "WAITING" and "updates" in seen
    again = advance(graph, "adv-1", Step(task=spec.task))  # the same pause: nothing runs
    assert again.interrupts == paused.interrupts
    done = advance(graph, "adv-1", Step(answers=approve(paused, approver="test")))
    assert done.status == "COMPLETED" and done.ended
    assert (tmp_path / "ws" / "published" / "report.md").is_file()
    assert advance(graph, "adv-1", Step(answers=approve(paused))).status == "COMPLETED"
