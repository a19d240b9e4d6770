"""Contracts, state schema, reducers, events, errors and the execution store.

This package imports nothing else from the project. Its names load on first use (PEP
562), so importing one light module of it (``execgraph.state.errors``) costs no LangGraph.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    **{name: "execgraph.state.events" for name in ("Event", "EventType", "make_event")},
    **{
        name: "execgraph.state.schema"
        for name in ("ExecutorInput", "ExecutorOutput", "ExecutorState", "RunState")
    },
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'execgraph.state' has no attribute {name!r}")
    value = getattr(import_module(_WHERE.get(name, "execgraph.state.contracts")), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
