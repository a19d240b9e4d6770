"""Trust-boundary models of :mod:`execgraph.state.contracts`: frozen, strict, JSON-portable."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import execgraph.state as state
from execgraph.state import contracts
from execgraph.state.contracts import (
    Actor,
    ApprovalDecision,
    ApprovalRequest,
    BudgetKind,
    Decision,
    DecisionKind,
    Evidence,
    ObservationStatus,
    Outcome,
    PartialProgress,
    RunStatus,
    SideEffect,
    StopCondition,
    SuccessCheck,
    TaskContract,
    TaskSpec,
    Timing,
    ToolError,
    ToolExecutionRequest,
    ToolRef,
    ToolResult,
    Workspace,
)
from execgraph.state.errors import Phase

# --------------------------------------------------------------------------- TaskSpec


def test_task_spec_minimal_defaults() -> None:
    spec = TaskSpec(goal="write a note")
    assert spec.goal == "write a note"
    assert spec.deliverables == []
    assert spec.allowed_actions is None
    assert spec.success_checks == []
    assert spec.stop_conditions == []
    assert spec.budgets == {}
    assert spec.deadline_s is None
    assert spec.actor == Actor()


def test_task_spec_rejects_an_unknown_key() -> None:
    with pytest.raises(ValidationError) as info:
        TaskSpec.model_validate({"goal": "g", "max_steps": 10})
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_task_spec_rejects_an_unknown_key_in_a_nested_model() -> None:
    with pytest.raises(ValidationError):
        TaskSpec.model_validate({"goal": "g", "actor": {"user_id": "u", "role": "admin"}})
    with pytest.raises(ValidationError):
        TaskSpec.model_validate(
            {"goal": "g", "success_checks": [{"kind": "evidence", "weight": 2}]}
        )


@pytest.mark.parametrize("goal", ["", None])
def test_task_spec_goal_is_required_and_non_empty(goal: Any) -> None:
    with pytest.raises(ValidationError):
        TaskSpec.model_validate({"goal": goal})


def test_task_spec_without_goal_fails() -> None:
    with pytest.raises(ValidationError):
        TaskSpec.model_validate({"success_checks": []})


@pytest.mark.parametrize("deadline", [0, 0.0, -1, -0.5])
def test_task_spec_deadline_must_be_positive(deadline: float) -> None:
    with pytest.raises(ValidationError):
        TaskSpec(goal="g", deadline_s=deadline)


@pytest.mark.parametrize("deadline", [0.001, 1, 3600.5])
def test_task_spec_accepts_a_positive_deadline(deadline: float) -> None:
    assert TaskSpec(goal="g", deadline_s=deadline).deadline_s == deadline


def test_task_spec_is_frozen() -> None:
    spec = TaskSpec(goal="g")
    with pytest.raises(ValidationError):
        spec.goal = "other"
    with pytest.raises(ValidationError):
        spec.actor.user_id = "mallory"
    assert spec.goal == "g"


def test_task_spec_budgets_are_keyed_by_kind() -> None:
    spec = TaskSpec.model_validate(
        {"goal": "g", "budgets": {"model_calls": 5, "tool_calls": 10, "cost_usd": 0.5}}
    )
    assert spec.budgets == {
        BudgetKind.MODEL_CALLS: 5,
        BudgetKind.TOOL_CALLS: 10,
        BudgetKind.COST_USD: 0.5,
    }
    with pytest.raises(ValidationError):
        TaskSpec.model_validate({"goal": "g", "budgets": {"steps": 5}})


def test_task_spec_goal_checks_and_stop_conditions_are_separate() -> None:
    spec = TaskSpec.model_validate(
        {
            "goal": "g",
            "success_checks": [{"kind": "output_contains", "value": "done"}],
            "stop_conditions": [{"kind": "tool_failed", "target": "search", "count": 2}],
        }
    )
    assert spec.success_checks == [SuccessCheck(kind="output_contains", value="done")]
    assert spec.stop_conditions == [StopCondition(kind="tool_failed", target="search", count=2)]


def test_a_stop_condition_outside_the_vocabulary_is_refused() -> None:
    """A field that accepted free text and ignored it was a defect: now it is typed."""
    for bad in ("user says stop", {"kind": "when_bored"}, {"kind": "denied", "count": 0}):
        with pytest.raises(ValidationError):
            TaskSpec.model_validate({"goal": "g", "stop_conditions": [bad]})


def test_success_check_built_in_kinds_and_empty_kind() -> None:
    # Which extra kinds exist is admission's business; an empty kind never is one.
    for kind in ("tool_succeeded", "evidence", "file_contains", "output_contains"):
        assert SuccessCheck(kind=kind).kind == kind
    with pytest.raises(ValidationError):
        SuccessCheck(kind="")
    with pytest.raises(ValidationError):
        SuccessCheck.model_validate({"target": "t"})


def test_task_spec_json_round_trip() -> None:
    spec = TaskSpec.model_validate(
        {
            "goal": "g",
            "deliverables": ["notes/a.md"],
            "success_checks": [{"kind": "file_contains", "target": "notes/a.md", "value": "x"}],
            "budgets": {"tokens_in": 1000},
            "deadline_s": 30,
            "data_scope": ["notes/"],
        }
    )
    assert TaskSpec.model_validate_json(spec.model_dump_json()) == spec
    assert TaskSpec.model_validate(json.loads(json.dumps(spec.model_dump(mode="json")))) == spec


def test_task_contract_requires_every_field() -> None:
    with pytest.raises(ValidationError):
        TaskContract.model_validate({"run_id": "r", "goal": "g"})
    contract = TaskContract(
        run_id="r",
        actor=Actor(),
        goal="g",
        deliverables=[],
        allowed_actions=["read_file"],
        success_checks=[],
        stop_conditions=[],
        budgets={BudgetKind.TOOL_CALLS: 3},
        deadline=None,
        approval_rules=[],
        data_scope=[],
        workspace=Workspace(root="/tmp/ws"),
    )
    assert TaskContract.model_validate_json(contract.model_dump_json()) == contract


# --------------------------------------------------------------------------- decisions


def test_decision_kinds() -> None:
    assert {k.value for k in DecisionKind} == {
        "tool_call",
        "answer",
        "ask_user",
        "request_approval",
        "revise_plan",
        "wait",
        "finish",
        "abort",
    }
    d = Decision(decision_id="d1", kind="tool_call", tool_name="t", arguments={"x": 1})  # type: ignore[arg-type]
    assert d.kind is DecisionKind.TOOL_CALL
    with pytest.raises(ValidationError):
        Decision(decision_id="d1", kind="launch_missiles")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Decision.model_validate({"decision_id": "d1", "kind": "finish", "confidence": 0.9})


# --------------------------------------------------------------------------- ToolResult


def _full_result() -> ToolResult:
    return ToolResult(
        call_id="call-1",
        tool_name="write_note",
        tool_version="1.0.0",
        outcome=Outcome.PARTIAL,
        status=ObservationStatus.PARTIAL,
        data={"written": ["a.md"], "nested": {"n": [1, 2.5, None, True]}, "text": "é✓"},
        error=ToolError(
            type="TransientError",
            phase=Phase.EXECUTE,
            retryable=True,
            message="rate limited",
            retry_after_s=1.5,
        ),
        side_effect=SideEffect(attempted=True, committed=None, summary="1 of 2 files"),
        evidence=[
            Evidence(source_id="file:a.md", kind="file_hash", value="sha256:ab", version=2),
            Evidence(source_id="http:1", kind="response_id", ref="sha256:cd", verified=True),
        ],
        timing=Timing(queued_ms=3, running_ms=40),
        truncated=True,
        partial=PartialProgress(committed=["a.md"], pending=["b.md"]),
        idempotency_key="k1",
        attempt_id="att-1",
        reconciled=False,
    )


def test_tool_result_json_round_trip() -> None:
    result = _full_result()
    assert ToolResult.model_validate_json(result.model_dump_json()) == result
    # The state form (model_dump(mode="json")) is plain JSON and parses back too.
    as_state = result.model_dump(mode="json")
    assert json.loads(json.dumps(as_state)) == as_state
    assert ToolResult.model_validate(as_state) == result
    assert as_state["outcome"] == "partial"
    assert as_state["status"] == "PARTIAL"
    assert as_state["error"]["phase"] == "execute"
    assert as_state["side_effect"]["committed"] is None


def test_tool_result_minimal_defaults_round_trip() -> None:
    result = ToolResult(
        call_id="c", tool_name="t", outcome=Outcome.SUCCEEDED, status=ObservationStatus.OK
    )
    assert result.error is None
    assert result.side_effect == SideEffect(attempted=False, committed=False)
    assert ToolResult.model_validate_json(result.model_dump_json()) == result


def test_tool_result_rejects_unknown_outcome_phase_and_keys() -> None:
    base: dict[str, Any] = {
        "call_id": "c",
        "tool_name": "t",
        "outcome": "succeeded",
        "status": "OK",
    }
    ToolResult.model_validate(base)
    with pytest.raises(ValidationError):
        ToolResult.model_validate({**base, "outcome": "probably"})
    with pytest.raises(ValidationError):
        ToolResult.model_validate({**base, "status": "FINE"})
    with pytest.raises(ValidationError):
        ToolResult.model_validate({**base, "traceback": "..."})
    with pytest.raises(ValidationError):
        ToolResult.model_validate(
            {**base, "error": {"type": "X", "phase": "later", "message": "m"}}
        )


def test_outcomes_and_observation_statuses() -> None:
    assert {o.value for o in Outcome} == {"succeeded", "failed", "partial", "unknown", "cancelled"}
    assert {
        "OK",
        "NOT_FOUND",
        "DENIED",
        "RETRYABLE_ERROR",
        "PERMANENT_ERROR",
        "PARTIAL",
        "UNKNOWN",
    } <= {s.value for s in ObservationStatus}


def test_tool_execution_request_round_trip_and_frozen() -> None:
    request = ToolExecutionRequest(
        run_id="r",
        turn_id="t",
        call_id="c",
        tool=ToolRef(name="write_note", requested_version="1.0.0"),
        arguments={"path": "a.md", "text": "x"},
        workspace=Workspace(id="w", root="/tmp/w"),
        deadline=123.0,
        idempotency_key="k",
        expected_state={"a.md": "sha256:00"},
    )
    assert ToolExecutionRequest.model_validate_json(request.model_dump_json()) == request
    with pytest.raises(ValidationError):
        request.call_id = "other"
    with pytest.raises(ValidationError):
        ToolExecutionRequest.model_validate({**request.model_dump(), "sudo": True})


# --------------------------------------------------------------------------- RunStatus


@pytest.mark.parametrize(
    ("status", "terminal"),
    [
        (RunStatus.RUNNING, False),
        (RunStatus.WAITING, False),
        (RunStatus.COMPLETED, True),
        (RunStatus.FAILED, True),
        (RunStatus.CANCELLED, True),
        (RunStatus.BUDGET_EXHAUSTED, True),
        (RunStatus.PARTIAL, True),
    ],
)
def test_run_status_terminal(status: RunStatus, terminal: bool) -> None:
    assert status.terminal is terminal


def test_run_status_is_a_plain_string_in_state() -> None:
    assert len(RunStatus) == 7
    assert RunStatus("COMPLETED") == "COMPLETED"
    assert json.dumps({"status": RunStatus.COMPLETED}) == '{"status": "COMPLETED"}'


def test_budget_kinds_are_separate() -> None:
    assert {k.value for k in BudgetKind} == {
        "model_calls",
        "tool_calls",
        "tokens_in",
        "tokens_out",
        "wall_time_s",
        "cost_usd",
    }


# --------------------------------------------------------------------------- approvals


@pytest.mark.parametrize("action", ["approve", "reject", "edit"])
def test_approval_decision_accepts_the_three_actions(action: str) -> None:
    decision = ApprovalDecision.model_validate({"action": action})
    assert decision.action == action
    assert decision.approver == "human"


@pytest.mark.parametrize("action", ["approved", "APPROVE", "yes", "", None, "allow", 1])
def test_approval_decision_rejects_anything_else(action: Any) -> None:
    with pytest.raises(ValidationError):
        ApprovalDecision.model_validate({"action": action})


def test_approval_decision_edit_carries_arguments_and_forbids_extras() -> None:
    edit = ApprovalDecision.model_validate({"action": "edit", "arguments": {"path": "b.md"}})
    assert edit.arguments == {"path": "b.md"}
    with pytest.raises(ValidationError):
        ApprovalDecision.model_validate({"action": "approve", "token": "forged"})


def test_approval_request_round_trip() -> None:
    request = ApprovalRequest(
        run_id="r",
        call_id="c",
        tool="delete_file",
        version="1.0.0",
        effect="irreversible",
        arguments={"path": "a.md"},
        args_hash="sha256:ff",
        reason="irreversible effect",
        expires_at=10.0,
    )
    dumped = request.model_dump(mode="json")
    assert dumped["kind"] == "approval"
    assert ApprovalRequest.model_validate(json.loads(json.dumps(dumped))) == request


# --------------------------------------------------------------------------- all models


MODELS: list[type[BaseModel]] = [
    getattr(contracts, name)
    for name in contracts.__all__
    if isinstance(getattr(contracts, name), type)
    and issubclass(getattr(contracts, name), BaseModel)
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_contract_model_is_frozen_and_forbids_extras(model: type[BaseModel]) -> None:
    assert model.model_config.get("frozen") is True
    assert model.model_config.get("extra") == "forbid"


def test_public_names_are_reexported_from_state() -> None:
    for name in ("TaskSpec", "ToolResult", "RunStatus"):
        assert getattr(state, name) is getattr(contracts, name)
