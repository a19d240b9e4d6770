"""Trajectory replay: re-run a recorded run's control logic with no model and no side effect.

The event log holds every model reply (``model.called``), every call's committed result
(the execution store) and every approval answer. Replay rebuilds the same architecture
with a scripted model that returns the recorded replies and tools whose ``run`` returns
the recorded observations, then compares the new trajectory with the recorded one. With
the same policy and verifier it reproduces the run; a changed policy or verifier shows up
as a diff (a decision that went differently, a call that was not recorded, another final
status).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

import execgraph.state.errors as errors
from execgraph.state.contracts import Evidence, PartialProgress
from execgraph.state.errors import ExecGraphError, PermanentError
from execgraph.state.events import EventType
from execgraph.state.home import Home
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing.scripted import ScriptedChatModel, ScriptExhausted
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.registry import ToolLike, ToolRegistry
from execgraph.tools.spec import ToolSpec

__all__ = ["ReplayReport", "recorded_trajectory", "replay_run"]


@dataclass
class ReplayReport:
    """What a replay did, and where it diverged from the recording."""

    run_id: str
    recorded_status: str | None
    replayed_status: str | None
    model_calls: int = 0
    """Model calls the replay made; every one was answered from the recording."""
    effects_replayed: int = 0
    """Write and irreversible calls answered with their recorded result instead of acting."""
    recorded_calls: list[str] = field(default_factory=list)
    replayed_calls: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)
    recorded_model_calls: int = 0
    """Model calls the recording holds."""
    replies_used: int = 0
    """Recorded replies the replay's scripted model handed out (each of its model calls
    that was answered from the recording; a call past them stops the replay)."""
    workspace_changes: list[str] = field(default_factory=list)
    """Files of the replay's workspace copy that differ after the replay: measured by
    hashing the copy before and after, so "no effect" is an observation, not a claim."""
    store: str = ""
    """The kind of store the recording was read from (``SqliteExecutionStore``, ...)."""

    @property
    def same(self) -> bool:
        """True when the replay reproduced the recorded trajectory and status."""
        return not self.diff


def recorded_trajectory(store: ExecutionStore, run_id: str) -> dict[str, Any]:
    """The recording of ``run_id``: model replies, call results, approvals, final status."""
    events = store.events(run_id)
    calls = [e for e in events if e.type == EventType.TOOL_REQUESTED and e.call_id]
    results: dict[str, dict[str, Any]] = {}
    for event in calls:
        assert event.call_id is not None
        record = store.get(f"{run_id}:{event.call_id}")
        if record is not None and record.result is not None:
            results[event.call_id] = record.result
    answers = [e.payload for e in events if e.type == EventType.APPROVAL_RESOLVED and e.payload]
    finished = [e.payload.get("status") for e in events if e.type == EventType.RUN_FINISHED]
    # What each call was, once normalized (defaults, aliases, paths), and which version of
    # each source it observed: a changed tool default or a changed world shows up here
    # even when the call's id, tool and status are the same.
    hashes = {
        e.call_id: str(e.payload.get("args_hash"))
        for e in events
        if e.type == EventType.TOOL_RESOLVED and e.call_id and e.payload
    }
    versions = {
        call_id: sorted(
            (str(item.get("source_id")), str(item.get("version")))
            for item in result.get("evidence") or []
        )
        for call_id, result in results.items()
    }
    return {
        "events": events,
        "model_calls": sum(1 for e in events if e.type == EventType.MODEL_CALLED),
        "hashes": hashes,
        "versions": versions,
        # sorted: calls of one turn run in parallel, their log order is not a divergence
        "calls": sorted(f"{e.call_id}:{e.payload.get('tool')}" for e in calls),
        "results": results,
        "answers": answers,
        "status": finished[-1] if finished else None,
    }


def _recorded_error(error: Mapping[str, Any]) -> ExecGraphError:
    """The recorded failure again, as its own typed error (same status for the model)."""
    cls = getattr(errors, str(error.get("type")), None)
    kind = cls if isinstance(cls, type) and issubclass(cls, ExecGraphError) else PermanentError
    return kind(str(error.get("message", "failed")))


def _recorded_tool(
    spec: ToolSpec, results: Mapping[str, dict[str, Any]], served: list[str]
) -> ToolSpec:
    def output(ctx: InvokeContext) -> AdapterOutput:
        recorded = results.get(ctx.call_id)
        if recorded is None:
            raise PermanentError(f"replay: call {ctx.call_id} ({spec.name}) was never recorded")
        if spec.effect != "read" and ctx.call_id not in served:
            served.append(ctx.call_id)
        partial = recorded.get("partial")
        return AdapterOutput(
            data=recorded.get("data"),
            committed=(recorded.get("side_effect") or {}).get("committed"),
            evidence=tuple(Evidence.model_validate(e) for e in recorded.get("evidence", [])),
            truncated=bool(recorded.get("truncated")),
            partial=PartialProgress.model_validate(partial) if partial else None,
        )

    def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        recorded = results.get(ctx.call_id)
        if (
            recorded is not None
            and recorded.get("error")
            and recorded.get("outcome")
            in (
                "failed",
                "cancelled",
            )
        ):
            raise _recorded_error(recorded["error"])
        return output(ctx)

    def verify(args: BaseModel, out: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        return []  # the recorded evidence already includes the read-after-write

    def reconcile(args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
        return output(ctx)

    return replace(
        spec, run=run, verify=verify if spec.verify else None, reconcile=reconcile, read_state=None
    )


def replay_run(
    build: Callable[..., Any],
    tools: Iterable[ToolLike],
    store: ExecutionStore,
    run_id: str,
    task: Mapping[str, Any],
    *,
    policy: Any = None,
    checks: Mapping[str, Any] | None = None,
    workspace: Path | None = None,
) -> ReplayReport:
    """Replay ``run_id`` through ``build(model=..., tools=..., store=..., ...)``.

    Args:
        build: Compiles the architecture (``functools.partial(build_graph, "react")``).
        tools: The run's real tools; replay keeps their names, versions, effects and locks
            and replaces what they do with the recorded observations.
        store: The store that holds the recording.
        run_id: The recorded run.
        task: The recorded task (the run's input).
        policy: A policy to replay under (default: the build's default).
        checks: Extra success checks (a changed verifier gives a visible diff).
        workspace: The run's workspace; the verifier's file checks read a copy of it (its
            final state: replay itself writes nothing).
    """
    recording = recorded_trajectory(store, run_id)
    model = ScriptedChatModel.from_events(recording["events"])
    specs = ToolRegistry(tools).latest()
    served: list[str] = []  # effectful calls answered from the recording
    replay_tools = [_recorded_tool(s, recording["results"], served) for s in specs]
    home = Path(tempfile.mkdtemp(prefix="execgraph-replay-"))
    copy = Home(home).workspace
    if workspace is not None and workspace.is_dir():
        shutil.copytree(workspace, copy, symlinks=True)
    before = _tree_hashes(copy)
    replay_store = SqliteExecutionStore(Home(home).exec_db)
    app = build(
        model=model,
        tools=replay_tools,
        store=replay_store,
        policy=policy,
        checkpointer=InMemorySaver(),
        home=home,
        workspace=copy,
        checks=dict(checks or {}),
    )
    config = {"configurable": {"thread_id": run_id}}
    answers = list(recording["answers"])
    report = ReplayReport(
        run_id,
        recording["status"],
        None,
        recorded_calls=recording["calls"],
        recorded_model_calls=recording["model_calls"],
        store=type(store).__name__,
    )
    try:
        out = app.invoke({"task": dict(task)}, config)
        while "__interrupt__" in out:
            resume = {
                i.id: answers.pop(0) if answers else {"action": "reject", "reason": "not recorded"}
                for i in out["__interrupt__"]
            }
            out = app.invoke(Command(resume=resume), config)
        report.replayed_status = out.get("status")
    except ScriptExhausted:
        report.diff.append("the replay asked the model for a reply the recording does not have")
    replayed = recorded_trajectory(replay_store, run_id)
    report.replayed_calls = replayed["calls"]
    report.model_calls = replayed["model_calls"]
    report.effects_replayed = len(served)
    report.replies_used = len(model.replies) - model.remaining
    after = _tree_hashes(copy)
    report.workspace_changes = sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
    replay_store.close()
    shutil.rmtree(home, ignore_errors=True)
    if report.replayed_status != report.recorded_status:
        report.diff.append(f"status {report.recorded_status} -> {report.replayed_status}")
    pairs = zip(report.recorded_calls, report.replayed_calls, strict=False)
    for index, (old, new) in enumerate(pairs):
        if old != new:
            report.diff.append(f"call #{index + 1}: {old} -> {new}")
    if len(report.recorded_calls) != len(report.replayed_calls):
        report.diff.append(
            f"{len(report.recorded_calls)} calls recorded, {len(report.replayed_calls)} replayed"
        )
    if model.remaining:
        report.diff.append(f"{model.remaining} recorded model replies were not used")
    for call_id, result in replayed["results"].items():
        before = recording["results"].get(call_id)
        if before is not None and before.get("status") != result.get("status"):
            report.diff.append(f"{call_id}: {before.get('status')} -> {result.get('status')}")
    report.diff.extend(_step_diff(recording, replayed))
    return report


def _tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every regular file under ``root`` (symlinks not followed)."""
    if not root.is_dir():
        return {}
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def _step_diff(recording: Mapping[str, Any], replayed: Mapping[str, Any]) -> list[str]:
    """Calls of both runs whose normalized arguments or observed versions differ."""
    diff = []
    for call_id, new in sorted(replayed["hashes"].items()):
        old = recording["hashes"].get(call_id)
        if old is not None and old != new:
            diff.append(
                f"{call_id}: the arguments differ once normalized (args hash {old[:12]} -> "
                f"{new[:12]}): a changed default, alias or path rule"
            )
    for call_id, new_versions in sorted(replayed["versions"].items()):
        old_versions = recording["versions"].get(call_id)
        if old_versions is not None and old_versions != new_versions:
            diff.append(f"{call_id}: observed versions {old_versions} -> {new_versions}")
    return diff
