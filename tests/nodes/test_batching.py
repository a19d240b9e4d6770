"""The fan-out groups a turn's calls: one task for those no rule could pause, one each else."""

from __future__ import annotations

from pathlib import Path

from execgraph.nodes.batching import executor_sends, may_pause
from execgraph.tools import PolicyEngine, tool_spec
from tests.support.executor import make_deps, request


@tool_spec(effect="read")
def look(i: int) -> str:
    """Read something."""
    return "seen"


@tool_spec(effect="write")
def note(text: str) -> str:
    """Write a note."""
    return "noted"


@tool_spec(effect="irreversible")
def publish(doc: str) -> str:
    """Publish a document."""
    return "published"


def _calls(tmp_path: Path, *tools: str) -> list[dict]:
    args = {"look": {"i": 1}, "note": {"text": "t"}, "publish": {"doc": "d"}, "gone": {}}
    return [request(t, args[t], root=tmp_path, call_id=f"c{k}") for k, t in enumerate(tools)]


def test_calls_no_rule_could_pause_share_one_task(tmp_path: Path) -> None:
    deps = make_deps(tmp_path, [look, note, publish])
    sends = executor_sends(_calls(tmp_path, "look", "publish", "note", "look"), deps)
    assert [(s.node, sorted(s.arg)) for s in sends] == [
        ("executor", ["request"]),
        ("executor", ["batch"]),
    ]
    assert sends[0].arg["request"]["call_id"] == "c1"  # the irreversible one, alone
    assert [r["call_id"] for r in sends[1].arg["batch"]] == ["c0", "c2", "c3"]  # queue order


def test_a_lone_call_is_sent_as_a_request_not_a_batch(tmp_path: Path) -> None:
    deps = make_deps(tmp_path, [look, publish])
    sends = executor_sends(_calls(tmp_path, "look", "publish"), deps)
    assert [sorted(s.arg) for s in sends] == [["request"], ["request"]]
    assert executor_sends([], deps) == []


def test_an_approval_rule_gives_a_call_a_task_of_its_own(tmp_path: Path) -> None:
    deps = make_deps(
        tmp_path, [look, note], PolicyEngine([{"tool": "note", "decision": "require_approval"}])
    )
    calls = _calls(tmp_path, "note", "look", "look")
    assert [may_pause(c, deps) for c in calls] == [True, False, False]
    # A rule carried by the request itself counts too.
    ruled = [
        {**c, "approval_rules": [{"tool": "look", "decision": "require_approval"}]}
        for c in _calls(tmp_path, "look", "look")
    ]
    assert len(executor_sends(ruled, make_deps(tmp_path, [look]))) == 2


def test_an_unknown_tool_cannot_pause_and_joins_the_batch(tmp_path: Path) -> None:
    # The gate refuses it before any policy applies; it is no reason for a task of its own.
    deps = make_deps(tmp_path, [look])
    calls = _calls(tmp_path, "gone", "look")
    assert not may_pause(calls[0], deps)
    [send] = executor_sends(calls, deps)
    assert [r["call_id"] for r in send.arg["batch"]] == ["c0", "c1"]
