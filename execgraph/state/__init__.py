"""Contracts, state schema, reducers, events, errors and the execution store.

This package imports nothing else from the project.
"""

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
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.schema import ExecutorInput, ExecutorOutput, ExecutorState, RunState

__all__ = [
    "Actor",
    "ApprovalDecision",
    "ApprovalRequest",
    "BudgetKind",
    "Decision",
    "DecisionKind",
    "Event",
    "EventType",
    "Evidence",
    "ExecutorInput",
    "ExecutorOutput",
    "ExecutorState",
    "ObservationStatus",
    "Outcome",
    "PartialProgress",
    "RunState",
    "RunStatus",
    "SideEffect",
    "StopCondition",
    "SuccessCheck",
    "TaskContract",
    "TaskSpec",
    "Timing",
    "ToolError",
    "ToolExecutionRequest",
    "ToolRef",
    "ToolResult",
    "Workspace",
    "make_event",
]
