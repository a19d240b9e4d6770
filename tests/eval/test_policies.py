"""The suite's policies: seeded determinism, variance across seeds, every §5.3 error."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from execgraph.eval.noisy import ERRORS, NoisyPolicy
from execgraph.eval.suite import SUITE, policy_model
from tests.support.eval_runs import EvalRun, run_task

_PORT = re.compile(r"127\.0\.0\.1:\d+")


def trajectory(run: EvalRun) -> list[Any]:
    """The run's decisions (tool calls with arguments, errors named), ports elided."""
    steps: list[Any] = []
    for message in run.values.get("messages") or []:
        if isinstance(message, AIMessage):
            calls = [(c["name"], _PORT.sub("HOST", repr(c["args"]))) for c in message.tool_calls]
            steps.append((calls, message.response_metadata.get("injected_error")))
    return [*steps, run.status, run.model.injected]  # type: ignore[attr-defined]


def _suite_runs(tmp: Path, arch: str, *, seed: int, noise: float) -> list[EvalRun]:
    return [
        run_task(t, arch, tmp / f"{arch}-{seed}-{noise}-{t.id}", seed=seed, noise=noise)
        for t in SUITE
    ]


def test_noise_zero_is_the_oracle_and_noise_above_it_the_noisy_policy() -> None:
    assert not isinstance(policy_model(SUITE[0], seed=1, noise=0.0), NoisyPolicy)
    noisy = policy_model(SUITE[0], seed=1, noise=0.3)
    assert isinstance(noisy, NoisyPolicy) and noisy.noise == 0.3


@pytest.mark.integration
@pytest.mark.timeout(120)
@pytest.mark.parametrize("arch", ["react", "plan_execute"])
def test_the_same_seed_gives_the_same_trajectory(arch: str, tmp_path: Path) -> None:
    for task in SUITE[::3]:
        first = run_task(task, arch, tmp_path / f"a-{task.id}", seed=7, noise=0.3)
        again = run_task(task, arch, tmp_path / f"b-{task.id}", seed=7, noise=0.3)
        assert trajectory(first) == trajectory(again), task.id


def test_the_noisy_policy_does_not_depend_on_the_global_generator(tmp_path: Path) -> None:
    runs = []
    for n, global_seed in enumerate((1, 99999)):
        random.seed(global_seed)
        runs.append(run_task(SUITE[7], "react", tmp_path / str(n), seed=3, noise=0.6))
    assert trajectory(runs[0]) == trajectory(runs[1])
    assert runs[0].model.injected  # type: ignore[attr-defined]  # it did err


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_different_seeds_differ_and_noise_costs_acceptance(tmp_path: Path) -> None:
    one = _suite_runs(tmp_path, "react", seed=1, noise=0.3)
    two = _suite_runs(tmp_path, "react", seed=2, noise=0.3)
    assert [trajectory(r) for r in one] != [trajectory(r) for r in two]
    oracle = _suite_runs(tmp_path, "react", seed=1, noise=0.0)
    rate = {
        "oracle": sum(r.accepted for r in oracle) / len(oracle),
        "noisy": sum(r.accepted for r in one + two) / len(one + two),
    }
    assert rate["oracle"] == 1.0
    assert rate["noisy"] < rate["oracle"]


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_every_decision_error_occurs_at_noise_0_3(tmp_path: Path) -> None:
    made: set[str] = set()
    for arch in ("react", "plan_execute", "hybrid"):
        for run in _suite_runs(tmp_path, arch, seed=11, noise=0.3):
            made.update(run.model.injected)  # type: ignore[attr-defined]
        if made >= set(ERRORS):
            break
    assert made >= set(ERRORS), sorted(set(ERRORS) - made)


def test_each_error_reply_says_which_error_it_is(tmp_path: Path) -> None:
    run = run_task(SUITE[6], "react", tmp_path, seed=5, noise=1.0)
    named = [
        m.response_metadata.get("injected_error")
        for m in run.values.get("messages") or []
        if isinstance(m, AIMessage)
    ]
    assert named and all(n in ERRORS for n in named if n)
    assert any(named)
