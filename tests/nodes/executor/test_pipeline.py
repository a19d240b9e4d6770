"""The gate leaves its typed authorization on the call, and the run uses it as is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from execgraph.nodes.executor import ExecutorDeps, Finished, Gate, execute
from execgraph.nodes.executor.call import Authorized, Call
from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.pipeline import admit, gate, run
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ObservationStatus, SchemaViolation
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import PolicyEngine, ToolRegistry, ToolSpec, tool_spec


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


def test_the_run_uses_the_gates_authorization_without_resolving_again(tmp_path: Path) -> None:
    deps, registry = _deps(tmp_path)
    raw = {"file": "./notes/a.txt", "text": "hi"}
    call = Call.of(_request(tmp_path, raw), deps)
    gate(call)
    assert call.cleared is not None
    gated = call.authorized
    registry.resolved = 0

    assert admit(call) is None  # ready for its record

    assert registry.resolved == 0  # nothing resolved (or validated) a second time
    assert call.cleared is gated
    normalized = call.cleared.validated.normalized
    assert normalized.hash_before == stable_hash(raw)  # what the model sent, before aliases
    assert normalized.paths == ("notes/a.txt",)  # the confined paths
    assert normalized.arguments == {"path": "notes/a.txt", "text": "hi"}
    assert call.cleared.decision.rule == "save:allow"  # the rule that allowed it

    finished = run(call)
    assert isinstance(finished, Finished)
    assert finished.result.outcome == "succeeded" and registry.resolved == 0
    logged = {e.event_id for e in deps.store.events("r", call_id="c1")}
    assert finished.event_ids and set(finished.event_ids) <= logged


def test_a_refusal_is_a_typed_error_and_ends_the_call_unreserved(tmp_path: Path) -> None:
    deps, _ = _deps(tmp_path)
    call = Call.of(_request(tmp_path, {"path": "a.txt", "text": 3}), deps)
    gate(call)
    assert isinstance(call.refusal, SchemaViolation) and call.cleared is None

    finished = admit(call)

    assert isinstance(finished, Finished)
    assert finished.result.status is ObservationStatus(call.refusal.status)
    assert finished.result.error is not None
    assert finished.result.error.type == "SchemaViolation"
    assert deps.store.get("r:c1") is None  # refused before any execution record


def test_a_call_still_waiting_for_a_person_does_not_run(tmp_path: Path) -> None:
    deps, _ = _deps(tmp_path)
    call = Call.of(_request(tmp_path, {"path": "a.txt"}), deps)
    gate(call)
    assert call.authorized is not None
    asking = _ask(call.authorized)
    waiting = Call.of(call.request, deps)
    waiting.authorized = asking  # the policy asks a person, who has not answered

    refusals = [
        admit(waiting),
        execute(call.request, Gate(tuple(call.events.recorded()), authorized=asking), deps),
        execute(call.request, Gate(), deps),  # never authorized at all
    ]
    for refused in refusals:
        assert isinstance(refused, Finished)
        assert refused.result.outcome == "failed"
        assert refused.result.side_effect.attempted is False
    assert deps.store.get("r:c1") is None


def _ask(authorized: Authorized) -> Authorized:
    return replace(authorized, decision=replace(authorized.decision, verdict="require_approval"))
