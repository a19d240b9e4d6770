"""The gate hands its typed ``Authorized`` to the effectful half, which runs it as is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from execgraph.nodes.executor.approval import approval_request
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.effects import execute, stage
from execgraph.nodes.executor.gate import Gate, gate_call
from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.stages import Finished, Staged
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ObservationStatus, SchemaViolation
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import PolicyEngine, ToolRegistry, ToolSpec, tool_spec
from execgraph.tools.policy import PolicyDecision


@tool_spec(effect="write", path_args=["path"], locks=["file:{path}"], aliases={"file": "path"})
def save(path: str, text: str = "") -> str:
    """Save text."""
    return "saved"


class _CountingRegistry(ToolRegistry):
    """A real registry that counts how often a call is resolved."""

    resolved = 0

    def resolve(self, name: str, requested_version: str | None = None) -> ToolSpec:
        self.resolved += 1
        return super().resolve(name, requested_version)


def _deps(tmp_path: Path) -> tuple[ExecutorDeps, _CountingRegistry]:
    registry = _CountingRegistry([save])
    rule = {"tool": "save", "decision": "allow", "override": True}
    deps = ExecutorDeps(
        registry=registry,
        policy=PolicyEngine([rule]),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        approval_secret=b"handoff",
    )
    return deps, registry


def _request(tmp_path: Path, arguments: dict[str, Any]) -> ToolExecutionRequest:
    return ToolExecutionRequest.model_validate(
        {
            "run_id": "r",
            "turn_id": "t1",
            "call_id": "c1",
            "tool": {"name": "save"},
            "arguments": arguments,
            "workspace": {"id": "ws", "root": str(tmp_path)},
        }
    )


def test_the_effectful_half_runs_the_gates_authorization_without_resolving_again(
    tmp_path: Path,
) -> None:
    deps, registry = _deps(tmp_path)
    raw = {"file": "./notes/a.txt", "text": "hi"}
    request, gate = gate_call(_request(tmp_path, raw), deps)
    assert gate.cleared is not None
    registry.resolved = 0

    staged = stage(request, gate, deps)

    assert isinstance(staged, Staged)
    assert registry.resolved == 0  # nothing resolved (or validated) a second time
    assert staged.authorized is gate.authorized
    normalized = staged.authorized.validated.normalized
    assert normalized.hash_before == stable_hash(raw)  # what the model sent, before aliases
    assert normalized.paths == ("notes/a.txt",)  # the confined paths
    assert normalized.arguments == {"path": "notes/a.txt", "text": "hi"}
    assert staged.authorized.decision.rule == "save:allow"  # the rule that allowed it

    finished = execute(request, gate, deps)
    assert isinstance(finished, Finished)
    assert finished.result.outcome == "succeeded" and registry.resolved == 0
    logged = {e.event_id for e in deps.store.events("r", call_id="c1")}
    assert finished.event_ids and set(finished.event_ids) <= logged


def test_a_refusal_is_a_typed_error_and_ends_the_call_unreserved(tmp_path: Path) -> None:
    deps, _ = _deps(tmp_path)
    request, gate = gate_call(_request(tmp_path, {"path": "a.txt", "text": 3}), deps)
    assert isinstance(gate.failure, SchemaViolation) and gate.cleared is None

    finished = stage(request, gate, deps)

    assert isinstance(finished, Finished)
    assert finished.result.status is ObservationStatus(gate.failure.status)
    assert finished.result.error is not None
    assert finished.result.error.type == "SchemaViolation"
    assert deps.store.get("r:c1") is None  # refused before any execution record


def test_a_gate_still_asking_a_person_does_not_run(tmp_path: Path) -> None:
    deps, _ = _deps(tmp_path)
    request, gate = gate_call(_request(tmp_path, {"path": "a.txt"}), deps)
    assert gate.authorized is not None
    asking = replace(gate, approval=approval_request(request, gate.authorized, ttl_s=60))
    unasked = Gate(gate.events, authorized=replace(gate.authorized, decision=_ask(gate)))

    for refused in (stage(request, asking, deps), stage(request, unasked, deps)):
        assert isinstance(refused, Finished)
        assert refused.result.outcome == "failed"
        assert refused.result.side_effect.attempted is False
    assert deps.store.get("r:c1") is None


def _ask(gate: Gate) -> PolicyDecision:
    assert gate.authorized is not None
    return replace(gate.authorized.decision, verdict="require_approval")
