"""Ask the user: the run waits (status WAITING) on a LangGraph interrupt for an answer."""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from execgraph.state.contracts import Decision, DecisionKind, RunStatus
from execgraph.state.schema import RunState

__all__ = ["ask_user"]


def ask_user(state: RunState) -> dict[str, Any]:
    """Pause with the model's question; the resume value is the user's answer."""
    decisions = [Decision.model_validate(d) for d in state.get("decisions") or []]
    question = next(d for d in decisions if d.kind is DecisionKind.ASK_USER)
    answer = interrupt(
        {
            "kind": "question",
            "question": question.content,
            "run_id": (state.get("contract") or {}).get("run_id"),
        }
    )
    text = answer.get("answer", "") if isinstance(answer, dict) else str(answer)
    turn = int(state.get("turn", 0))
    return {
        "status": RunStatus.RUNNING.value,
        "decisions": [],
        "feedback": [
            {
                "id": f"t{turn}:answer",
                "turn": turn,
                "tool_call_id": question.tool_call_id,
                "text": f"The user answered: {text}",
            }
        ],
    }
