"""A call's event recorder: the one place its events are appended, in order, each with
every id of the call; what the pipeline commits is exactly what was recorded."""

from __future__ import annotations

import threading
from pathlib import Path

from execgraph.nodes.executor import ExecutorDeps, preview
from execgraph.nodes.executor.call import Call, EventRecorder
from execgraph.nodes.executor.node import run_calls
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import PolicyEngine, ToolRegistry, tool_spec


@tool_spec(effect="write")
def note(text: str) -> str:
    """Write a note."""
    return "noted"


def _request(**extra: object) -> ToolExecutionRequest:
    return ToolExecutionRequest.model_validate(
        {
            "run_id": "r",
            "turn_id": "t",
            "decision_id": "d",
            "step_id": "s",
            "call_id": "c",
            "tool": {"name": "note"},
            "arguments": {"text": "hi"},
            "workspace": {"id": "ws", "root": "/tmp"},
            **extra,
        }
    )


def _deps(tmp_path: Path) -> ExecutorDeps:
    return ExecutorDeps(
        registry=ToolRegistry([note]),
        policy=PolicyEngine(),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        approval_secret=b"recorder",
    )


def test_events_are_kept_in_order_with_every_id_of_the_call() -> None:
    recorder = EventRecorder(_request())
    first = recorder.record(EventType.TOOL_REQUESTED, payload={"arguments": {"text": "hi"}})
    named = recorder.event(EventType.APPROVAL_REQUESTED, seq=0)  # built, not kept
    second = recorder.record(EventType.TOOL_STARTED, attempt_id="a1")
    assert recorder.recorded() == [first, second]
    assert named not in recorder.recorded()
    for event in (first, named, second):
        ids = (event.run_id, event.turn_id, event.decision_id, event.call_id, event.step_id)
        assert ids == ("r", "t", "d", "c", "s")
    assert second.attempt_id == "a1" and second.event_id == "r/c:tool.started:a1"
    assert recorder.record(EventType.TOOL_STARTED, attempt_id="a1").event_id == second.event_id


def test_arguments_beyond_the_runs_bound_are_logged_as_their_size() -> None:
    recorder = EventRecorder(_request(max_argument_bytes=64))
    event = recorder.record(EventType.TOOL_REQUESTED, payload={"arguments": {"text": "x" * 100}})
    assert event.payload["arguments"] == {"omitted": "ArgumentsTooLarge", "bytes": 111}


def test_threads_recording_at_once_lose_nothing() -> None:
    recorder = EventRecorder(_request())

    def emit(worker: int) -> None:
        for i in range(200):
            recorder.record(EventType.TOOL_OUTPUT, attempt_id="a", seq=f"{worker}-{i}")

    threads = [threading.Thread(target=emit, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({e.event_id for e in recorder.recorded()}) == 8 * 200


def test_what_a_call_commits_is_what_it_recorded_from_the_gate_to_the_end(
    tmp_path: Path,
) -> None:
    deps = _deps(tmp_path)
    [finished] = run_calls([_request().model_dump(mode="json")], deps)
    assert finished.result.outcome == "succeeded"
    logged = deps.store.events("r", call_id="c")
    assert tuple(e.event_id for e in logged) == finished.event_ids
    assert [e.type for e in logged] == [
        EventType.TOOL_REQUESTED,
        EventType.TOOL_RESOLVED,
        EventType.TOOL_STARTED,
        EventType.TOOL_SIDE_EFFECT_OBSERVED,
        EventType.TOOL_COMPLETED,
    ]
    attempt = finished.result.attempt_id
    assert [e.attempt_id for e in logged] == [None, None, attempt, attempt, attempt]


def test_what_tool_code_raised_is_one_event_per_stage_and_occurrence(tmp_path: Path) -> None:
    call = Call.of(_request(), _deps(tmp_path))
    call.authorized = preview(call.request, call.deps)
    call.attempt_id = "a1"
    for stage in ("invoke", "reconcile", "reconcile"):
        call.report(stage, RuntimeError("boom"))  # type: ignore[arg-type]
    raised = call.events.recorded()
    assert [e.event_id for e in raised] == [
        "r/c:tool.raised:a1:invoke",
        "r/c:tool.raised:a1:reconcile",
        "r/c:tool.raised:a1:reconcile-2",
    ]
    assert raised[0].payload["tool"] == "note@1.0.0" and raised[0].payload["type"] == "RuntimeError"
