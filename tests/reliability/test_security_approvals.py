"""Security battery, approvals: forged, replayed or re-bound tokens and stale approvals."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.nodes.executor import issue_token, preview
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.tools import PolicyEngine, tool_spec
from execgraph.tools.adapters import FileAdapter
from tests.reliability.security_helpers import _refused, _result
from tests.support.executor import SECRET, Counter, config, make_deps, make_executor, request

# ----------------------------------------------------------------------------- approvals


def _launcher(counter: Counter, version: str = "1.0.0") -> Any:
    @tool_spec(effect="irreversible", version=version)
    def launch(target: str) -> str:
        """An irreversible act, counted by the tool itself."""
        counter.add(target)
        return f"launched {target}"

    return launch


def _args_hash(deps: Any, req: dict[str, Any]) -> str:
    return preview(ToolExecutionRequest.model_validate(req), deps).validated.normalized.args_hash


@pytest.mark.parametrize(
    ("secret", "target", "tool_key"),
    [
        (b"another-secret", "moon", "launch@1.0.0"),  # forged: signed with another key
        (SECRET, "mars", "launch@1.0.0"),  # genuine, but for other arguments
        (SECRET, "moon", "launch@0.9.0"),  # genuine, but for another tool version
    ],
    ids=["forged", "other-arguments", "other-version"],
)
def test_forged_or_misbound_approval_token_is_refused(
    tmp_path: Path, secret: bytes, target: str, tool_key: str
) -> None:
    counter = Counter()
    deps = make_deps(tmp_path, [_launcher(counter)])
    bound = _args_hash(deps, request("launch", {"target": target}, root=tmp_path))
    token = issue_token(secret, tool_key=tool_key, args_hash=bound)
    req = request("launch", {"target": "moon"}, root=tmp_path, approval_token=token)
    out = make_executor(deps).invoke({"request": req}, config())
    _refused(_result(out), "ApprovalTokenInvalid")
    assert len(counter) == 0 and "__interrupt__" not in out


def test_used_approval_token_cannot_be_replayed(tmp_path: Path) -> None:
    counter = Counter()
    deps = make_deps(tmp_path, [_launcher(counter)])
    req = request("launch", {"target": "moon"}, root=tmp_path)
    token = issue_token(SECRET, tool_key="launch@1.0.0", args_hash=_args_hash(deps, req))
    app = make_executor(deps)
    first = app.invoke({"request": {**req, "approval_token": token}}, config("t-1"))
    assert _result(first).outcome == "succeeded" and len(counter) == 1
    replay = {**req, "call_id": "call-2", "approval_token": token}
    out = app.invoke({"request": replay}, config("t-2"))
    _refused(_result(out, "call-2"), "ApprovalTokenInvalid")
    assert len(counter) == 1  # the act happened once, for the one approval


def _pause(app: Any, req: dict[str, Any], thread: str) -> Any:
    out = app.invoke({"request": req}, config(thread))
    [pending] = out["__interrupt__"]
    return pending


def test_new_tool_version_after_approval_is_stale(tmp_path: Path) -> None:
    counter = Counter()
    deps = make_deps(tmp_path, [_launcher(counter)])
    app = make_executor(deps)
    pending = _pause(app, request("launch", {"target": "moon"}, root=tmp_path), "t-v")
    deps.registry.register(_launcher(counter, version="1.1.0"))  # swapped under the approver
    out = app.invoke(Command(resume={pending.id: {"action": "approve"}}), config("t-v"))
    _refused(_result(out), "ApprovalStale")
    assert len(counter) == 0


def test_expected_state_changed_after_approval_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plan.txt").write_text("v1\n")
    rules = [{"tool": "write_file", "decision": "require_approval"}]
    deps = make_deps(tmp_path, [FileAdapter(tmp_path)], PolicyEngine(rules))
    app = make_executor(deps)
    sha = hashlib.sha256(b"v1\n").hexdigest()
    args = {"path": "plan.txt", "content": "v2\n"}
    req = request("write_file", args, root=tmp_path, expected_state={"sha256": sha})
    pending = _pause(app, req, "t-cas")
    (tmp_path / "plan.txt").write_text("changed by someone else\n")
    out = app.invoke(Command(resume={pending.id: {"action": "approve"}}), config("t-cas"))
    # re-checked on resume: what the person approved no longer holds, so the approval is stale
    result = _result(out)
    _refused(result, "ApprovalStale", status="DENIED")
    assert result.error is not None and "expected_state" in result.error.message
    assert (tmp_path / "plan.txt").read_text() == "changed by someone else\n"
