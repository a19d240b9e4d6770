"""Reading a run back from its records: its events, evidence and final state, a replay.

Every engine answers the read-only questions from the same records (the execution store
and the run's last checkpoint), so ``trace``, ``metrics``, ``diagnose`` and ``replay``
say the same of a run wherever it ran: the embedded engine reads them in this process,
a Temporal worker reads them for a client (:mod:`execgraph.engines.temporal`) and sends
them back as JSON (:meth:`RunTrace.to_json`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from execgraph.engines.graphs import ToolSet
from execgraph.engines.spec import RunSpec
from execgraph.graph.build import build_graph
from execgraph.replaying import ReplayReport, replay_run
from execgraph.state.events import Event
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.registry import ToolLike, ToolRegistry

__all__ = ["SHOWN_VALUES", "RunTrace", "replay_report", "replay_with", "tool_costs", "trace_of"]

SHOWN_VALUES = ("status", "output", "error", "verification", "evidence", "budget", "contract")
"""The state values a trace carries (what metrics and diagnosis read), not the transcript."""


@dataclass(frozen=True)
class RunTrace:
    """What the read-only views of one run are computed from."""

    run_id: str
    events: list[Event] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    tool_costs: dict[str, float] = field(default_factory=dict)
    """Declared cost per tool (``name@version``) of the run's tool set; empty when the
    tool set is unknown (a run started from Python)."""

    def to_json(self) -> dict[str, Any]:
        """As JSON values (events in their JSON form)."""
        plain = json.loads(json.dumps(self.values, default=str))
        return {
            "run_id": self.run_id,
            "events": [e.model_dump(mode="json") for e in self.events],
            "evidence": json.loads(json.dumps(self.evidence, default=str)),
            "values": plain,
            "tool_costs": dict(self.tool_costs),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunTrace:
        """Back from :meth:`to_json`."""
        return cls(
            run_id=str(data["run_id"]),
            events=[Event.model_validate(e) for e in data.get("events") or []],
            evidence=list(data.get("evidence") or []),
            values=dict(data.get("values") or {}),
            tool_costs={str(k): float(v) for k, v in (data.get("tool_costs") or {}).items()},
        )


def tool_costs(tools: Iterable[ToolLike]) -> dict[str, float]:
    """``name@version`` -> declared ``cost_usd`` of ``tools``."""
    return {spec.key: spec.cost_usd for spec in ToolRegistry(tools).latest()}


def trace_of(
    store: ExecutionStore,
    run_id: str,
    values: Mapping[str, Any],
    tools: Iterable[ToolLike] | None = None,
) -> RunTrace:
    """The run's events and evidence from ``store``, with its state ``values``."""
    return RunTrace(
        run_id=run_id,
        events=store.events(run_id),
        evidence=store.evidence(run_id),
        values={k: values[k] for k in SHOWN_VALUES if k in values},
        tool_costs=tool_costs(tools) if tools is not None else {},
    )


def replay_with(
    spec: RunSpec, tool_set: ToolSet, store: ExecutionStore, workspace: Path
) -> ReplayReport:
    """Replay ``spec``'s recorded run with the tools and checks it ran with (no model
    call, no side effect)."""
    build = partial(build_graph, spec.arch, stages=tool_set.stages)
    return replay_run(
        build,
        tool_set.tools(workspace),
        store,
        spec.run_id,
        spec.task,
        checks=tool_set.checks,
        workspace=workspace,
    )


def replay_report(data: Mapping[str, Any]) -> ReplayReport:
    """A replay report back from its JSON form (``dataclasses.asdict``)."""
    return ReplayReport(**dict(data))


def report_json(report: ReplayReport) -> dict[str, Any]:
    """A replay report as JSON values."""
    plain: dict[str, Any] = json.loads(json.dumps(asdict(report), default=str))
    return plain
