"""Each executor stage alone: its typed result, and its typed refusal."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.errors import GraphInterrupt

from execgraph.nodes.executor.approval import approval_request, check_fresh, parse_decision
from execgraph.nodes.executor.commit import build_result, commit, failure_result
from execgraph.nodes.executor.evidence import gather_evidence
from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.invoke import invoke
from execgraph.nodes.executor.lock import acquire, lock_keys
from execgraph.nodes.executor.normalize import normalize
from execgraph.nodes.executor.outcome import settle
from execgraph.nodes.executor.policy import authorize
from execgraph.nodes.executor.reconcile import in_doubt
from execgraph.nodes.executor.reserve import idempotency_key, reserve
from execgraph.nodes.executor.resolve import resolve
from execgraph.nodes.executor.stages import Invoked
from execgraph.nodes.executor.tokens import issue_token, verify_token
from execgraph.nodes.executor.validate import validate
from execgraph.state.contracts import Evidence, PartialProgress, ToolExecutionRequest
from execgraph.state.errors import (
    ApprovalStale,
    ApprovalTokenInvalid,
    DeadlineExceeded,
    DomainViolation,
    IncompatibleVersionError,
    LockTimeout,
    PathEscapeError,
    PolicyDenied,
    ResponseLostError,
    SchemaViolation,
    StateGuardMismatch,
    TransientError,
    UnknownToolError,
    VerificationError,
)
from execgraph.state.events import EventType, make_event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import (
    AdapterOutput,
    InvokeContext,
    PolicyEngine,
    ToolRegistry,
    ToolSpec,
    tool_spec,
)

SECRET = b"stage-secret"


@tool_spec(effect="write", path_args=["path"], locks=["file:{path}"], aliases={"file": "path"})
def save(path: str, text: str = "", mode: str = "w") -> str:
    """Save text."""
    return "saved"


@tool_spec(effect="irreversible")
def launch(target: str) -> str:
    """Launch something."""
    return "launched"


def _req(tool: str = "save", args: dict[str, Any] | None = None, **kw: Any) -> ToolExecutionRequest:
    base: dict[str, Any] = {
        "run_id": "r",
        "turn_id": "t",
        "call_id": "c",
        "tool": {"name": tool, "requested_version": kw.pop("version", None)},
        "arguments": {"path": "a.txt"} if args is None else args,
        "workspace": {"id": "ws", "root": str(kw.pop("root", "/tmp"))},
    }
    return ToolExecutionRequest.model_validate({**base, **kw})


def _ctx(root: Path, **kw: Any) -> InvokeContext:
    return InvokeContext(run_id="r", call_id="c", attempt_id="a1", workspace_root=root, **kw)


# --------------------------------------------------------------------------- resolve


def test_resolve_exact_compatible_and_refusals() -> None:
    registry = ToolRegistry([save, save.with_(version="1.2.0")])
    assert resolve(_req(), registry).version == "1.2.0"
    assert resolve(_req(version="1.0.0"), registry).version == "1.0.0"
    assert resolve(_req(version="1.1.0"), registry).version == "1.2.0"
    with pytest.raises(IncompatibleVersionError):
        resolve(_req(version="2.0.0"), registry)
    with pytest.raises(UnknownToolError):
        resolve(_req("nope"), registry)


# --------------------------------------------------------------------------- normalize


def test_normalize_applies_aliases_paths_defaults_and_hashes() -> None:
    n = normalize(_req(args={"file": "./docs//a.txt"}), save)
    assert n.arguments == {"path": "docs/a.txt", "text": "", "mode": "w"}
    assert n.paths == ("docs/a.txt",)
    assert n.hash_before == stable_hash({"file": "./docs//a.txt"})
    assert n.args_hash == stable_hash(n.arguments)
    same = normalize(_req(args={"path": "docs/a.txt", "mode": "w"}), save)
    assert same.args_hash == n.args_hash  # two spellings, one action


@pytest.mark.parametrize("bad", ["../etc/passwd", "/etc/passwd", "a\x00b", "a/../../x"])
def test_normalize_refuses_path_escapes(bad: str) -> None:
    with pytest.raises(PathEscapeError):
        normalize(_req(args={"path": bad}), save)


def test_normalize_refuses_alias_collisions() -> None:
    with pytest.raises(SchemaViolation):
        normalize(_req(args={"path": "a", "file": "b"}), save)


# --------------------------------------------------------------------------- validate


def test_validate_schema_names_fields_only() -> None:
    with pytest.raises(SchemaViolation) as info:
        validate(_req(), save, normalize(_req(args={"path": "a", "text": {"k": "s3cr3t"}}), save))
    assert "text" in info.value.message and "s3cr3t" not in info.value.message


def test_validate_state_guard_and_deadline(tmp_path: Path) -> None:
    def read_state(key: str, args: Any, root: Path) -> str | None:
        return (root / args.path).read_text() if key == "content" else None

    guarded = save.with_(read_state=read_state)
    (tmp_path / "a.txt").write_text("v1")
    req = _req(root=tmp_path, expected_state={"content": "v1"})
    assert validate(req, guarded, normalize(req, guarded)).args.path == "a.txt"  # type: ignore[attr-defined]
    stale = _req(root=tmp_path, expected_state={"content": "v0"})
    with pytest.raises(StateGuardMismatch):
        validate(stale, guarded, normalize(stale, guarded))
    with pytest.raises(DomainViolation):  # a tool that cannot read state cannot be guarded
        validate(stale, save, normalize(stale, save))
    late = _req(root=tmp_path, deadline=time.time() - 1)
    with pytest.raises(DeadlineExceeded):
        validate(late, save, normalize(late, save))


def test_validate_refuses_symlink_escape(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "link").symlink_to(outside)
    req = _req(root=root, args={"path": "link/x.txt"})
    with pytest.raises(PathEscapeError):
        validate(req, save, normalize(req, save))


# --------------------------------------------------------------------------- policy / approval


def _authorized(tool: ToolSpec, req: ToolExecutionRequest, engine: PolicyEngine | None = None):  # type: ignore[no-untyped-def]
    return authorize(
        req, tool, validate(req, tool, normalize(req, tool)), engine or PolicyEngine(), SECRET
    )


def test_policy_verdicts_and_token() -> None:
    assert _authorized(save, _req()).decision.verdict == "allow"
    req = _req("launch", {"target": "x"})
    assert _authorized(launch, req).decision.verdict == "require_approval"
    with pytest.raises(PolicyDenied):
        _authorized(launch, req, PolicyEngine([{"tool": "launch", "decision": "deny"}]))
    token = issue_token(SECRET, tool_key="launch@1.0.0", args_hash=stable_hash({"target": "x"}))
    ok = _authorized(launch, _req("launch", {"target": "x"}, approval_token=token))
    assert ok.decision.verdict == "allow" and ok.token_id
    with pytest.raises(PolicyDenied):  # a token never overrides a deny
        _authorized(
            launch,
            _req("launch", {"target": "x"}, approval_token=token),
            PolicyEngine([{"tool": "launch", "decision": "deny"}]),
        )


def test_tokens_refuse_forgery_expiry_and_other_arguments() -> None:
    token = issue_token(SECRET, tool_key="launch@1.0.0", args_hash="h1", ttl_s=60)
    assert verify_token(SECRET, token, tool_key="launch@1.0.0", args_hash="h1")
    for kwargs in (
        {"tool_key": "launch@1.0.0", "args_hash": "h2"},
        {"tool_key": "launch@2.0.0", "args_hash": "h1"},
    ):
        with pytest.raises(ApprovalTokenInvalid):
            verify_token(SECRET, token, **kwargs)
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(b"other-secret", token, tool_key="launch@1.0.0", args_hash="h1")
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(SECRET, token, tool_key="launch@1.0.0", args_hash="h1", now=time.time() + 61)
    with pytest.raises(ApprovalTokenInvalid):
        verify_token(SECRET, "garbage", tool_key="launch@1.0.0", args_hash="h1")


def test_approval_request_freshness() -> None:
    req = _req("launch", {"target": "x"}, deadline=time.time() + 100)
    auth = _authorized(launch, req)
    asked = approval_request(req, auth, ttl_s=3600)
    assert asked.expires_at is not None and asked.expires_at <= req.deadline  # type: ignore[operator]
    assert asked.args_hash == stable_hash({"target": "x"})
    check_fresh(asked, auth)
    with pytest.raises(ApprovalStale):
        check_fresh(asked, _authorized(launch, _req("launch", {"target": "y"})))
    with pytest.raises(ApprovalStale):
        newer = launch.with_(version="1.0.1")
        check_fresh(asked, _authorized(newer, req))
    with pytest.raises(ApprovalStale):
        check_fresh(asked, auth, now=asked.expires_at + 1)  # type: ignore[operator]


def test_parse_decision_fails_closed() -> None:
    assert parse_decision({"action": "approve"}).action == "approve"
    assert parse_decision("reject").action == "reject"
    assert parse_decision({"action": "delete-prod"}).action == "reject"
    assert parse_decision(None).action == "reject"


# ------------------------------------------------------------------ reserve / lock / commit


def test_reserve_fresh_committed_in_doubt_and_key_clash(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "s.db")
    req = _req()
    auth = _authorized(save, req)
    assert idempotency_key(req) == "r:c"
    first = reserve(store, req, auth, "a1")
    assert first.kind == "fresh"
    assert reserve(store, req, auth, "a2").kind == "in_doubt"
    result = build_result(
        req,
        "1.0.0",
        settle(save, Invoked(AdapterOutput(data="ok", committed=True), None, 3), 1024, _no_art),
        key=first.key,
        attempt_id="a1",
    )
    committed = commit(
        store, first.key, result, [make_event(EventType.TOOL_COMPLETED, "r", call_id="c")], None
    )
    assert committed == result
    again = reserve(store, req, auth, "a3")
    assert again.kind == "committed" and again.record.result == result.model_dump(mode="json")
    other = _authorized(save, _req(args={"path": "b.txt"}))
    with pytest.raises(DomainViolation):
        reserve(store, req, other, "a4")
    # the first commit wins: a late duplicate commit returns the original
    late = failure_result(req, TransientError("late"))
    assert commit(store, first.key, late, [], None) == result


def _no_art(data: bytes, kind: str) -> str:
    raise AssertionError("no artifact expected")


def test_locks_are_scoped_sorted_and_exclusive(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "s.db")
    two = save.with_(locks=("file:{path}", "dir:{mode}"))
    keys = lock_keys(two, {"path": "a.txt", "mode": "w"}, "ws")
    assert keys == ("ws/dir:w", "ws/file:a.txt")
    with pytest.raises(DomainViolation):
        lock_keys(two, {"path": "a.txt"}, "ws")
    held = acquire(store, keys, "owner-1", lease_s=60, timeout_s=1)
    with pytest.raises(LockTimeout):
        acquire(store, keys[1:], "owner-2", lease_s=60, timeout_s=0.2)
    store.release_locks(held.keys, "owner-1")
    assert acquire(store, keys[1:], "owner-2", lease_s=60, timeout_s=1).keys == keys[1:]


# --------------------------------------------------------------------------- invoke / outcome


def test_invoke_captures_typed_foreign_and_timeout(tmp_path: Path) -> None:
    pool = ThreadPoolExecutor(4)
    ok = invoke(save, save.input_model(path="a"), _ctx(tmp_path), pool)
    assert ok.output is not None and ok.output.data == "saved" and ok.output.committed is True

    @tool_spec
    def boom() -> str:
        """Raise a foreign exception."""
        raise OSError("disk /secret/path exploded")

    raised = invoke(boom, boom.input_model(), _ctx(tmp_path), pool)
    assert type(raised.error).__name__ == "ToolRaised" and "secret" not in str(raised.error)

    release = threading.Event()

    @tool_spec(effect="write")
    def stuck(ctx: InvokeContext) -> str:
        """Ignore the deadline until released; honour cancellation."""
        ctx.cancel.wait(30)
        release.set()
        return "late"

    ctx = _ctx(tmp_path, deadline=time.time() + 0.05)
    cancelled = invoke(stuck, stuck.input_model(), ctx, pool)
    assert ctx.cancel.is_set() and release.wait(5)
    assert cancelled.output is not None  # finished within the grace period after cancel

    @tool_spec
    def interrupts() -> str:
        """Try to pause the graph from inside a tool."""
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        invoke(interrupts, interrupts.input_model(), _ctx(tmp_path), pool)


def test_settle_rules() -> None:
    def out(**kw: Any) -> Invoked:
        return Invoked(AdapterOutput(**kw), None, 1)

    assert settle(save, out(data=1, committed=True), 100, _no_art).outcome == "succeeded"
    assert settle(save, out(data=1, committed=None), 100, _no_art).outcome == "unknown"
    partial = settle(
        save, out(partial=PartialProgress(committed=["a"], pending=["b"])), 100, _no_art
    )
    assert partial.outcome == "partial" and partial.status == "PARTIAL"
    lost = settle(save, Invoked(None, ResponseLostError("lost"), 1), 100, _no_art)
    assert lost.outcome == "unknown" and lost.side_effect.committed is None
    busy = settle(save, Invoked(None, TransientError("busy", retry_after_s=2), 1), 100, _no_art)
    assert busy.status == "RETRYABLE_ERROR" and busy.error and busy.error.retry_after_s == 2
    read_timeout = settle(resolve_read(), Invoked(None, None, 1, timed_out=True), 100, _no_art)
    assert read_timeout.outcome == "failed" and read_timeout.status == "RETRYABLE_ERROR"
    write_timeout = settle(save, Invoked(None, None, 1, timed_out=True), 100, _no_art)
    assert write_timeout.outcome == "unknown"  # a timeout is not proof nothing happened
    stored: dict[str, bytes] = {}

    def art(data: bytes, kind: str) -> str:
        stored["ref"] = data
        return "sha256:x"

    big = settle(save, out(data="x" * 5000, committed=True), 100, art)
    assert big.truncated and big.data["artifact"] == "sha256:x" and len(stored["ref"]) > 5000


def resolve_read() -> ToolSpec:
    @tool_spec
    def look(q: str = "") -> str:
        """Read something."""
        return q

    return look


# --------------------------------------------------------------------------- evidence / reconcile


def test_gather_evidence_verifies_writes(tmp_path: Path) -> None:
    ev = Evidence(source_id="file:a", kind="sha256", value="h", verified=True)

    def verify_ok(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        return [ev]

    def verify_bad(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        raise VerificationError("content differs after write")

    output = AdapterOutput(data="ok", committed=True)
    settled = settle(save, Invoked(output, None, 1), 100, _no_art)
    args = save.input_model(path="a")
    good = gather_evidence(save.with_(verify=verify_ok), args, settled, output, _ctx(tmp_path))
    assert good.evidence == (ev,)
    bad = gather_evidence(save.with_(verify=verify_bad), args, settled, output, _ctx(tmp_path))
    assert bad.outcome == "failed" and bad.error is not None and bad.error.phase == "verify"


def test_in_doubt_reconciles_or_stays_unknown(tmp_path: Path) -> None:
    args = save.input_model(path="a")
    ctx = _ctx(tmp_path)
    assert in_doubt(resolve_read(), resolve_read().input_model(), ctx) is None  # reads rerun
    unknown = in_doubt(save, args, ctx)
    assert unknown is not None and unknown.outcome == "unknown"

    def said(value: bool | None):  # type: ignore[no-untyped-def]
        return lambda a, c: AdapterOutput(committed=value)

    done = in_doubt(save.with_(reconcile=said(True)), args, ctx)
    assert done is not None and done.outcome == "succeeded" and done.reconciled
    assert in_doubt(save.with_(reconcile=said(False)), args, ctx) is None  # proven absent: rerun
    assert in_doubt(save.with_(reconcile=said(None)), args, ctx).outcome == "unknown"  # type: ignore[union-attr]
