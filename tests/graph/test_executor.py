"""The executor subgraph end to end, over a real SQLite execution store."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.nodes.executor import issue_token, reconcile
from execgraph.state.contracts import ToolResult
from execgraph.state.errors import ResponseLostError, UsageError
from execgraph.state.events import EventType
from execgraph.tools import AdapterOutput, InvokeContext, PolicyEngine, tool_spec
from tests.support.executor import SECRET, Counter, config, make_deps, make_executor, request


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _file_state(key: str, args: Any, root: Path) -> str | None:
    return _sha(root / args.path) if key == "sha256" else None


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A workspace with counted write / irreversible / flaky tools."""
    root = tmp_path / "ws"
    root.mkdir()
    writes, published, sent = Counter(), Counter(), Counter()

    @tool_spec(effect="write", locks=["file:{path}"], path_args=["path"], read_state=_file_state)
    def write_note(path: str, text: str) -> str:
        """Write a note into the workspace."""
        writes.add((path, text))
        (root / path).write_text(text)
        return f"wrote {len(text)} chars"

    @tool_spec(effect="irreversible")
    def publish(doc: str, channel: str = "blog") -> str:
        """Publish a document (irreversible)."""
        published.add((doc, channel))
        return f"published {doc} to {channel}"

    def sent_probe(args: Any, ctx: InvokeContext) -> AdapterOutput | None:
        return AdapterOutput(committed=any(m == args.message for m in sent.effects))

    @tool_spec(effect="write", reconcile=sent_probe)
    def send_lossy(message: str) -> str:
        """Send a message; the response is always lost after the effect."""
        sent.add(message)
        raise ResponseLostError("connection dropped after the message was sent")

    @tool_spec(effect="write")
    def send_lossy_unprobed(message: str) -> str:
        """Send a message with no way to check it afterwards."""
        sent.add(message)
        raise ResponseLostError("connection dropped after the message was sent")

    tools = [write_note, publish, send_lossy, send_lossy_unprobed]
    return {
        "root": root,
        "tools": tools,
        "writes": writes,
        "published": published,
        "sent": sent,
        "tmp": tmp_path,
    }


def _run(
    world: dict[str, Any],
    tool: str,
    args: dict[str, Any],
    policy: PolicyEngine | None = None,
    thread: str = "t-1",
    **extra: Any,
) -> tuple[Any, dict[str, Any]]:
    deps = make_deps(world["tmp"], world["tools"], policy)
    app = make_executor(deps)
    out = app.invoke({"request": request(tool, args, root=world["root"], **extra)}, config(thread))
    return deps, out


def _result(out: dict[str, Any], call_id: str = "call-1") -> ToolResult:
    return ToolResult.model_validate(out["results"][call_id])


def test_happy_write_commits_with_events(world: dict[str, Any]) -> None:
    deps, out = _run(world, "write_note", {"path": "./a.txt", "text": "hello"})
    result = _result(out)
    assert result.outcome == "succeeded" and result.status == "OK"
    assert result.side_effect.committed is True
    assert (world["root"] / "a.txt").read_text() == "hello"
    assert len(world["writes"]) == 1
    types = [e.type for e in deps.store.events("run-1", call_id="call-1")]
    assert types[0] == EventType.TOOL_REQUESTED and types[-1] == EventType.TOOL_COMPLETED
    assert EventType.TOOL_STARTED in types and EventType.TOOL_SIDE_EFFECT_OBSERVED in types
    assert out["events"]["count"] == len(types)
    assert deps.store.get("run-1:call-1").state == "committed"


def test_unknown_tool_is_refused_before_anything(world: dict[str, Any]) -> None:
    deps, out = _run(world, "delete_everything", {})
    result = _result(out)
    assert result.status == "NOT_FOUND" and result.error is not None
    assert result.error.phase == "resolve" and result.side_effect.attempted is False
    assert deps.store.get("run-1:call-1") is None  # no execution record: nothing was reserved


def test_schema_violation_names_fields_not_values(world: dict[str, Any]) -> None:
    _, out = _run(world, "write_note", {"path": "a.txt", "text": 42, "extra": "sk-SECRET"})
    result = _result(out)
    assert result.error is not None and result.error.type == "SchemaViolation"
    assert "text" in result.error.message and "extra" in result.error.message
    assert "sk-SECRET" not in result.model_dump_json()
    assert len(world["writes"]) == 0


def test_expected_state_mismatch_refuses_the_write(world: dict[str, Any]) -> None:
    target = world["root"] / "a.txt"
    target.write_text("v1")
    stale = _sha(target)
    target.write_text("v2 written by someone else")
    _, out = _run(
        world, "write_note", {"path": "a.txt", "text": "mine"}, expected_state={"sha256": stale}
    )
    result = _result(out)
    assert result.error is not None and result.error.type == "StateGuardMismatch"
    assert result.error.retryable is True
    assert target.read_text() == "v2 written by someone else" and len(world["writes"]) == 0
    _, out = _run(
        world,
        "write_note",
        {"path": "a.txt", "text": "mine"},
        thread="t-2",
        call_id="call-2",
        expected_state={"sha256": _sha(target)},
    )
    assert _result(out, "call-2").outcome == "succeeded" and target.read_text() == "mine"


def test_policy_deny_never_executes(world: dict[str, Any]) -> None:
    policy = PolicyEngine([{"tool": "write_note", "decision": "deny", "reason": "frozen"}])
    deps, out = _run(world, "write_note", {"path": "a.txt", "text": "x"}, policy)
    result = _result(out)
    assert result.status == "DENIED" and result.error is not None and result.error.phase == "policy"
    assert len(world["writes"]) == 0 and not (world["root"] / "a.txt").exists()
    types = [e.type for e in deps.store.events("run-1")]
    assert EventType.TOOL_DENIED in types and EventType.TOOL_STARTED not in types


def test_write_outside_data_scope_is_denied(world: dict[str, Any]) -> None:
    _, out = _run(
        world, "write_note", {"path": "secret/x.txt", "text": "x"}, data_scope=["drafts/**"]
    )
    assert _result(out).status == "DENIED" and len(world["writes"]) == 0


def _approval(world: dict[str, Any], args: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    out = app.invoke({"request": request("publish", args, root=world["root"])}, config())
    return deps, app, out


def test_approval_approve_runs_exactly_the_approved_call(world: dict[str, Any]) -> None:
    _, app, out = _approval(world, {"doc": "report.md"})
    [pause] = out["__interrupt__"]
    assert pause.value["tool"] == "publish" and pause.value["version"] == "1.0.0"
    assert pause.value["arguments"] == {"doc": "report.md", "channel": "blog"}  # normalized
    assert len(world["published"]) == 0  # nothing before the person answers
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), config())
    assert _result(out).outcome == "succeeded"
    assert world["published"].effects == [("report.md", "blog")]


def test_approval_reject_never_executes(world: dict[str, Any]) -> None:
    _, app, out = _approval(world, {"doc": "report.md"})
    out = app.invoke(Command(resume={"action": "reject", "reason": "not yet"}), config())
    result = _result(out)
    assert result.error is not None and result.error.type == "ApprovalRejected"
    assert "not yet" in result.error.message and len(world["published"]) == 0


def test_approval_garbage_resume_fails_closed(world: dict[str, Any]) -> None:
    _, app, out = _approval(world, {"doc": "report.md"})
    out = app.invoke(Command(resume={"action": "yolo"}), config())
    assert _result(out).error.type == "ApprovalRejected"  # type: ignore[union-attr]
    assert len(world["published"]) == 0


def test_approval_edit_is_a_new_request_authorized_again(world: dict[str, Any]) -> None:
    deps, app, out = _approval(world, {"doc": "report.md"})
    edit = {"action": "edit", "arguments": {"doc": "report-v2.md", "channel": "news"}}
    out = app.invoke(Command(resume=edit), config())
    [again] = out["__interrupt__"]  # irreversible: the edited call needs its own approval
    assert again.value["arguments"] == {"doc": "report-v2.md", "channel": "news"}
    assert len(world["published"]) == 0
    out = app.invoke(Command(resume={"action": "approve"}), config())
    assert world["published"].effects == [("report-v2.md", "news")]
    requested = [e for e in deps.store.events("run-1") if e.type == EventType.APPROVAL_REQUESTED]
    assert len(requested) == 2


def test_edit_with_bad_arguments_is_validated_again(world: dict[str, Any]) -> None:
    _, app, out = _approval(world, {"doc": "report.md"})
    out = app.invoke(Command(resume={"action": "edit", "arguments": {"doc": 7}}), config())
    result = _result(out)
    assert result.error is not None and result.error.type == "SchemaViolation"
    assert len(world["published"]) == 0


def test_approval_goes_stale_when_the_tool_version_changes(world: dict[str, Any]) -> None:
    deps, app, out = _approval(world, {"doc": "report.md"})
    publish = next(t for t in world["tools"] if t.name == "publish")
    deps.registry.register(publish.with_(version="1.1.0"))
    out = app.invoke(Command(resume={"action": "approve"}), config())
    result = _result(out)
    assert result.error is not None and result.error.type == "ApprovalStale"
    assert len(world["published"]) == 0


def test_signed_token_approves_once_and_only_its_arguments(world: dict[str, Any]) -> None:
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    from execgraph.nodes.executor import stable_hash

    args = {"doc": "r.md", "channel": "blog"}
    token = issue_token(SECRET, tool_key="publish@1.0.0", args_hash=stable_hash(args))
    out = app.invoke(
        {"request": request("publish", args, root=world["root"], approval_token=token)}, config("a")
    )
    assert _result(out).outcome == "succeeded" and len(world["published"]) == 1
    out = app.invoke(
        {
            "request": request(
                "publish", args, root=world["root"], call_id="call-2", approval_token=token
            )
        },
        config("b"),
    )
    assert _result(out, "call-2").error.type == "ApprovalTokenInvalid"  # type: ignore[union-attr]
    out = app.invoke(
        {
            "request": request(
                "publish",
                {"doc": "other.md"},
                root=world["root"],
                call_id="call-3",
                approval_token=token,
            )
        },
        config("c"),
    )
    assert _result(out, "call-3").error.type == "ApprovalTokenInvalid"  # type: ignore[union-attr]
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    out = app.invoke(
        {
            "request": request(
                "publish", args, root=world["root"], call_id="call-4", approval_token=forged
            )
        },
        config("d"),
    )
    assert _result(out, "call-4").error.type == "ApprovalTokenInvalid"  # type: ignore[union-attr]
    assert len(world["published"]) == 1


def test_same_idempotency_key_returns_the_identical_result(world: dict[str, Any]) -> None:
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    req = request(
        "write_note",
        {"path": "a.txt", "text": "once"},
        root=world["root"],
        idempotency_key="order-42",
    )
    first = _result(app.invoke({"request": req}, config("a")))
    second = _result(app.invoke({"request": req}, config("b")))
    assert first == second and len(world["writes"]) == 1
    clash = request(
        "write_note",
        {"path": "a.txt", "text": "other"},
        root=world["root"],
        idempotency_key="order-42",
    )
    third = _result(app.invoke({"request": clash}, config("c")))
    assert third.error is not None and third.error.type == "DomainViolation"
    assert len(world["writes"]) == 1


def test_lost_response_is_unknown_then_reconciled_by_the_probe(world: dict[str, Any]) -> None:
    _, out = _run(world, "send_lossy", {"message": "hi"})
    result = _result(out)
    assert result.outcome == "succeeded" and result.reconciled is True
    assert world["sent"].effects == ["hi"]


def test_lost_response_without_probe_stays_unknown_and_is_not_retried(
    world: dict[str, Any],
) -> None:
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    req = request("send_lossy_unprobed", {"message": "hi"}, root=world["root"])
    result = _result(app.invoke({"request": req}, config("a")))
    assert result.outcome == "unknown" and result.status == "UNKNOWN"
    assert result.side_effect.committed is None
    again = _result(app.invoke({"request": req}, config("b")))  # the same call, replayed
    assert again == result and world["sent"].effects == ["hi"]  # counted once


@pytest.mark.parametrize("happened", [True, False])
def test_a_person_settles_an_unknown_outcome(world: dict[str, Any], happened: bool) -> None:
    """No probe can tell: a person's verdict is recorded with who decided; *happened*
    commits the call, *did not happen* makes the same write safe to run again."""
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    req = request("send_lossy_unprobed", {"message": "hi"}, root=world["root"])
    assert _result(app.invoke({"request": req}, config("a"))).outcome == "unknown"
    twin = request("send_lossy_unprobed", {"message": "hi"}, root=world["root"], call_id="c2")
    refused = _result(app.invoke({"request": twin}, config("b")), "c2")
    assert refused.error is not None and refused.error.type == "UnresolvedOutcome"

    settled = reconcile(deps.store, "run-1", "call-1", happened=happened, decided_by="alice")
    assert settled.outcome == ("succeeded" if happened else "failed")
    assert settled.side_effect.committed is happened
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.result == settled.model_dump(mode="json")
    [verdict] = [e for e in deps.store.events("run-1") if e.type == "tool.settled"]
    assert verdict.payload == {"happened": happened, "decided_by": "alice", "note": ""}
    again = request("send_lossy_unprobed", {"message": "hi"}, root=world["root"], call_id="c3")
    rerun = _result(app.invoke({"request": again}, config("c")), "c3")
    assert rerun.error is None or rerun.error.type != "UnresolvedOutcome"  # no longer refused
    assert world["sent"].effects == ["hi", "hi"]
    with pytest.raises(UsageError, match="not unknown"):
        reconcile(deps.store, "run-1", "call-1", happened=True, decided_by="bob")


def test_a_committed_call_is_returned_as_is_though_its_guard_no_longer_holds(
    world: dict[str, Any],
) -> None:
    """Replayed after its commit (a node re-run), the call finds its target changed by
    itself: the record decides, not the guard."""
    target = world["root"] / "a.txt"
    target.write_text("v1")
    guard = {"sha256": _sha(target)}
    deps = make_deps(world["tmp"], world["tools"])
    app = make_executor(deps)
    req = request("write_note", {"path": "a.txt", "text": "mine"}, root=world["root"])
    first = _result(app.invoke({"request": {**req, "expected_state": guard}}, config("a")))
    assert first.outcome == "succeeded" and target.read_text() == "mine"
    again = _result(app.invoke({"request": {**req, "expected_state": guard}}, config("b")))
    assert again == first and len(world["writes"]) == 1
    other = {**req, "call_id": "call-2", "expected_state": guard}  # a new call: guarded
    refused = _result(app.invoke({"request": other}, config("c")), "call-2")
    assert refused.error is not None and refused.error.type == "StateGuardMismatch"
    assert len(world["writes"]) == 1
