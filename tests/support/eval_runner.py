"""Stand-ins for the suite and metrics modules while they are not on this branch yet.

:func:`install_standins` registers minimal ``execgraph.eval.suite`` and
``execgraph.eval.metrics`` modules (the contract's names; the demo research task, twice)
ONLY when the real ones cannot be imported, so the runner's tests run against the real
modules as soon as they land. Used in-process only (``workers=1``): a
spawned worker imports the real modules.
"""

from __future__ import annotations

import importlib
import math
import statistics
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["STANDINS", "install_standins"]

STANDINS: list[str] = []
"""The module names replaced by stand-ins in this process (empty: all real)."""


def _suite() -> types.ModuleType:
    from execgraph.demo.build import DEMO_STAGES, demo_task, demo_tools
    from execgraph.demo.policy import OfflinePolicyModel
    from execgraph.demo.research import RESEARCH_CHECKS

    mod = types.ModuleType("execgraph.eval.suite")

    @dataclass(frozen=True)
    class EvalTask:
        id: str
        task_class: str
        description: str
        faults: tuple[str, ...] = ()

    class Prepared:
        def __init__(self, workdir: Path, fault: str | None) -> None:
            self.workspace = workdir / "workspace"
            self.workspace.mkdir(parents=True)
            self.task = demo_task()
            self.tools = demo_tools(self.workspace)
            self.policy: list[dict[str, Any]] = []
            self.stages = DEMO_STAGES
            self.checks = RESEARCH_CHECKS
            self.fault = fault
            self.store: Any = None

        def answer(self, value: Any) -> Any:
            return {"action": "approve"}

        def accept(self, values: Mapping[str, Any]) -> bool:
            return (self.workspace / "published" / "report.md").is_file()

        def recovered(self, values: Mapping[str, Any], accepted: bool) -> bool:
            return accepted

        def close(self) -> None:
            pass

    def prepare(task: Any, workdir: Path, *, fault: str | None = None) -> Prepared:
        return Prepared(workdir, fault)

    def policy_model(task: Any, *, seed: int, noise: float, fault: str | None = None) -> Any:
        return OfflinePolicyModel()

    mod.__dict__.update(
        EvalTask=EvalTask,
        Prepared=Prepared,
        prepare=prepare,
        policy_model=policy_model,
        FAULTS=("read_timeout", "user_cancels"),
        SUITE=(
            EvalTask("research", "short_read", "the demo", ("read_timeout",)),
            EvalTask("research-again", "exploration", "the demo once more"),
        ),
        POLICY_MODEL_NAME="offline-policy",
        POLICY_PRICES={"offline-policy": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}},
    )
    return mod


def _metrics() -> types.ModuleType:
    mod = types.ModuleType("execgraph.eval.metrics")

    @dataclass(frozen=True)
    class RunMetrics:
        run_id: str
        status: str | None
        tool_calls: int
        tool_calls_succeeded: int
        model_calls: int
        accepted: bool | None
        fault: str | None
        recovered: bool | None
        latency_s: float
        approval_wait_s: float
        reported_completed: bool

    @dataclass(frozen=True)
    class Estimate:
        mean: float
        low: float
        high: float
        n: int

    def run_metrics(
        events: Sequence[Any],
        *,
        accepted: bool | None = None,
        fault: str | None = None,
        recovered: bool | None = None,
        prices: Any = None,
        tool_costs: Any = None,
    ) -> RunMetrics:
        kinds = [str(e.type) for e in events]
        finished = [e for e in events if str(e.type) == "run.finished"]
        status = finished[-1].payload.get("status") if finished else None
        return RunMetrics(
            run_id=events[0].run_id if events else "",
            status=status,
            tool_calls=kinds.count("tool.started"),
            tool_calls_succeeded=sum(
                1
                for e in events
                if str(e.type) == "tool.completed" and e.payload.get("outcome") == "succeeded"
            ),
            model_calls=kinds.count("model.called"),
            accepted=accepted,
            fault=fault,
            recovered=recovered,
            latency_s=(events[-1].ts - events[0].ts) if events else 0.0,
            approval_wait_s=0.0,
            reported_completed=status == "COMPLETED",
        )

    def aggregate(runs: Sequence[RunMetrics]) -> dict[str, float]:
        accepted = sum(1 for r in runs if r.accepted)
        calls = sum(r.tool_calls for r in runs)
        faulted = [r for r in runs if r.fault]
        return {
            "acceptance_rate": accepted / len(runs),
            "tool_success_rate": (
                sum(r.tool_calls_succeeded for r in runs) / calls if calls else math.nan
            ),
            "recovery_rate": (
                sum(1 for r in faulted if r.recovered) / len(faulted) if faulted else math.nan
            ),
            "unauthorized_executions": 0.0,
            "latency_s": statistics.fmean(r.latency_s for r in runs),
        }

    def estimate(values: Sequence[float]) -> Estimate:
        values = [v for v in values if not math.isnan(v)]
        if not values:
            return Estimate(math.nan, math.nan, math.nan, 0)
        mean = statistics.fmean(values)
        if len(values) < 2:
            return Estimate(mean, mean, mean, len(values))
        half = 2.776 * statistics.stdev(values) / math.sqrt(len(values))
        return Estimate(mean, mean - half, mean + half, len(values))

    def load_events(store: Any, run_id: str) -> list[Any]:
        return list(store.events(run_id))

    mod.__dict__.update(
        RunMetrics=RunMetrics,
        Estimate=Estimate,
        run_metrics=run_metrics,
        aggregate=aggregate,
        estimate=estimate,
        load_events=load_events,
        declared_costs=lambda tools: {},
    )
    return mod


def install_standins() -> None:
    """Register a stand-in for each of suite / metrics that cannot be imported yet."""
    for name, factory in (("execgraph.eval.suite", _suite), ("execgraph.eval.metrics", _metrics)):
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = factory()
            STANDINS.append(name)
