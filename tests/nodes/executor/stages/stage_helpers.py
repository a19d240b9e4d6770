"""What the stage tests share: two tools, a request builder, a tool context, a call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.nodes.executor import ExecutorDeps
from execgraph.nodes.executor.call import Authorized, Call
from execgraph.nodes.executor.stages.normalize import normalize
from execgraph.nodes.executor.stages.policy import policy_verdict
from execgraph.nodes.executor.stages.validate import validate
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.store.base import ExecutionStore
from execgraph.tools import InvokeContext, PolicyEngine, ToolRegistry, ToolSpec, tool_spec

SECRET = b"stage-secret"


@tool_spec(effect="write", path_args=["path"], locks=["file:{path}"], aliases={"file": "path"})
def save(path: str, text: str = "", mode: str = "w") -> str:
    """Save text."""
    return "saved"


@tool_spec(effect="irreversible")
def launch(target: str) -> str:
    """Launch something."""
    return "launched"


def read_tool() -> ToolSpec:
    """A plain read tool."""

    @tool_spec
    def look(q: str = "") -> str:
        """Read something."""
        return q

    return look


def req(tool: str = "save", args: dict[str, Any] | None = None, **kw: Any) -> ToolExecutionRequest:
    """A request of run ``r``, call ``c``."""
    base: dict[str, Any] = {
        "run_id": "r",
        "turn_id": "t",
        "call_id": "c",
        "tool": {"name": tool, "requested_version": kw.pop("version", None)},
        "arguments": {"path": "a.txt"} if args is None else args,
        "workspace": {"id": "ws", "root": str(kw.pop("root", "/tmp"))},
    }
    return ToolExecutionRequest.model_validate({**base, **kw})


def ctx(root: Path, **kw: Any) -> InvokeContext:
    """A tool context of run ``r``, call ``c``, attempt ``a1``."""
    return InvokeContext(run_id="r", call_id="c", attempt_id="a1", workspace_root=root, **kw)


def authorized(
    tool: ToolSpec, request: ToolExecutionRequest, engine: PolicyEngine | None = None
) -> Authorized:
    """Stages 2-4a for ``request`` on ``tool``."""
    validated = validate(request, tool, normalize(request, tool))
    return policy_verdict(request, tool, validated, engine or PolicyEngine(), SECRET)


def call_of(
    request: ToolExecutionRequest,
    allowed: Authorized,
    store: ExecutionStore,
    attempt_id: str = "a1",
    key: str | None = None,
) -> Call:
    """An admitted call of ``request``: its authorization, attempt id and record key set."""
    deps = ExecutorDeps(
        registry=ToolRegistry([allowed.spec]),
        policy=PolicyEngine(),
        store=store,
        approval_secret=SECRET,
    )
    call = Call.of(request, deps)
    call.authorized, call.attempt_id = allowed, attempt_id
    call.key = key or f"{request.run_id}:{request.call_id}"
    return call


def no_artifacts(data: bytes, kind: str) -> str:
    """An artifact store that expects nothing."""
    raise AssertionError("no artifact expected")
