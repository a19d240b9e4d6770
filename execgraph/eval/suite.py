"""The evaluation suite: tasks over four classes, their worlds and their policies.

``SUITE`` lists the tasks (``>= 5`` per class, each on real adapters:
workspace files, a program run in the workspace, a local HTTP server, SQLite, the corpus).
:func:`prepare` builds one task's world afresh in a directory — with a fault injected when
asked — and returns what ``build_graph`` takes plus the task's own acceptance checker
(:meth:`Prepared.accept`), which looks at the world and the output only, never at the
runtime's verdict: that is what lets "verifier gate off" be measured.

:func:`policy_model` is the model for a run: the deterministic oracle at ``noise=0``
(:mod:`execgraph.eval.oracle`), the seeded noisy policy otherwise
(:mod:`execgraph.eval.noisy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from execgraph.eval import faults as fault_matrix
from execgraph.eval.noisy import NoisyPolicy
from execgraph.eval.oracle.policy import POLICY_MODEL_NAME, POLICY_PRICES, OraclePolicy
from execgraph.eval.tasks import exploration, high_risk, long_horizon, long_write, short_read
from execgraph.eval.tasks.common import (
    FAULTS,
    EvalTask,
    TaskClass,
    TaskDef,
    World,
    approval_answer,
    stages_of,
)
from execgraph.graph.workflow import Stage
from execgraph.nodes.cancel import request_cancel
from execgraph.nodes.deps import CheckFn
from execgraph.state.errors import UsageError
from execgraph.state.home import Home
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore

__all__ = [
    "FAULTS",
    "POLICY_MODEL_NAME",
    "POLICY_PRICES",
    "SUITE",
    "EvalTask",
    "Prepared",
    "TaskClass",
    "policy_model",
    "prepare",
    "task_def",
]

_DEFS: tuple[TaskDef, ...] = (
    *short_read.TASKS,
    *exploration.TASKS,
    *long_write.TASKS,
    *high_risk.TASKS,
    *long_horizon.TASKS,
)
_BY_ID: dict[str, TaskDef] = {d.task.id: d for d in _DEFS}
SUITE: tuple[EvalTask, ...] = tuple(d.task for d in _DEFS)
"""Every task of the suite, in class order."""


def task_def(task: EvalTask | str) -> TaskDef:
    """The definition (script and world builder) of a suite task.

    Raises:
        UsageError: no task of the suite has that id.
    """
    key = task if isinstance(task, str) else task.id
    if key not in _BY_ID:
        raise UsageError(f"no suite task {key!r}; choose one of {', '.join(_BY_ID)}")
    return _BY_ID[key]


@dataclass
class Prepared:
    """One task ready to run: what ``build_graph`` takes, and how the run is judged.

    ``store`` is where a cancel is requested when the scripted person cancels
    (``user_cancels``); unset, it is the embedded store ``build_graph(home=workdir/"home")``
    keeps at ``workdir/home/exec.db``.
    """

    task: dict[str, Any]
    tools: list[Any]
    workspace: Path
    policy: list[dict[str, Any]]
    stages: list[Stage] | None
    checks: dict[str, CheckFn]
    fault: str | None
    settings: dict[str, Any]
    world: World = field(repr=False)
    workdir: Path = field(repr=False)
    store: ExecutionStore | None = field(default=None, repr=False)

    def answer(self, interrupt_value: Any) -> Any:
        """The scripted person's answer to one interrupt: approve the task's right call,
        reject a wrong one, answer a question; under ``user_cancels`` cancel the run."""
        if self.fault == "user_cancels" and isinstance(interrupt_value, Mapping):
            run_id = str(interrupt_value.get("run_id") or "")
            store = self.store or SqliteExecutionStore(Home(self.workdir / "home").exec_db)
            request_cancel(store, run_id, "the user cancelled instead of approving")
            return {"action": "reject", "reason": "the user cancelled the run"}
        return approval_answer(self.world, interrupt_value)

    def accept(self, values: Mapping[str, Any]) -> bool:
        """The suite's own acceptance checker: the world and the output, never the verdict."""
        return bool(self.world.accept(values))

    def recovered(self, values: Mapping[str, Any], accepted: bool) -> bool:
        """For a fault-injected run: did it end as a correct runtime ends it?"""
        if self.fault is None:
            return accepted
        return fault_matrix.recovered(self.fault, self.world, values, accepted)

    def close(self) -> None:
        """Stop what the world started (servers, clients)."""
        while self.world.closers:
            self.world.closers.pop()()


def prepare(task: EvalTask, workdir: Path, *, fault: str | None = None) -> Prepared:
    """Build ``task``'s world afresh under ``workdir`` (with ``fault`` injected).

    Raises:
        UsageError: ``fault`` is not one of the task's faults.
    """
    definition = task_def(task)
    if fault is not None and fault not in definition.task.faults:
        raise UsageError(f"task {task.id!r} does not run under {fault!r}")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    world = definition.build(workdir, fault)
    if fault == "permission_denied":
        world.policy = [*world.policy, fault_matrix.deny(definition.guarded)]
    if fault == "budget_exhausted":
        world.task = fault_matrix.tight_budget(world.task, len(definition.script.steps))
    return Prepared(
        task=world.task,
        tools=world.tools,
        workspace=world.workspace,
        policy=world.policy,
        stages=stages_of(definition.script),
        checks=world.checks,
        fault=fault,
        settings=dict(world.settings),
        world=world,
        workdir=workdir,
    )


def policy_model(
    task: EvalTask, *, seed: int, noise: float, fault: str | None = None
) -> BaseChatModel:
    """The model for one run: the oracle at ``noise == 0``, else the seeded noisy policy.

    Only the policy-side faults change the policy (see :mod:`execgraph.eval.faults`).
    """
    definition = task_def(task)
    own = fault if fault in fault_matrix.POLICY_FAULTS else None
    if noise <= 0:
        return OraclePolicy(script=definition.script, fault=own)
    return NoisyPolicy(script=definition.script, fault=own, seed=seed, noise=noise, task_id=task.id)
