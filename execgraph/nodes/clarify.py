"""Clarification at admission: a task that declares what it cannot run without asks first.

The trigger is deterministic and the task's own: ``TaskSpec.required_slots`` names each
fact the task needs with the question that asks for it, and ``slots`` holds the ones
already known. Every required slot without a value is asked of the user — a LangGraph
interrupt of the same ``{"kind": "question", ...}`` shape as the model's ``ask_user``, so
``Command(resume="...")`` or ``execgraph answer`` answers it — at admission, before the
model is called or any tool runs, spending no model or tool call of the run's budget. The
answers go into the contract (``slots``) and, for the model, into the goal. The run's
deadline counts from admission, once every question is answered.

A question the model asks on its own (its first reply an ``ask_user``) needs no
declaration: that is the model's clarification, at the price of a model call.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from execgraph.state.contracts import TaskContract
from execgraph.state.errors import AdmissionError

__all__ = ["clarify"]

MAX_ANSWER_CHARS = 2000


def _text(answer: Any) -> str:
    text = answer.get("answer", "") if isinstance(answer, dict) else answer
    return str(text if text is not None else "").strip()[:MAX_ANSWER_CHARS]


def clarify(
    contract: TaskContract, required: dict[str, str], given: dict[str, str]
) -> TaskContract:
    """``contract`` with every required slot filled, asking the user for the missing ones.

    Raises:
        AdmissionError: an answer was empty (the task still lacks what it needs).
    """
    filled = {k: v.strip() for k, v in given.items() if v.strip()}
    asked: list[str] = []
    for slot, question in required.items():
        if slot in filled:
            continue
        answer = _text(
            interrupt(
                {"kind": "question", "question": question, "run_id": contract.run_id, "slot": slot}
            )
        )
        if not answer:
            raise AdmissionError(f"the required slot {slot!r} was not answered")
        filled[slot] = answer
        asked.append(slot)
    if not required:
        return contract
    lines = "\n".join(f"- {slot}: {filled[slot]}" for slot in required)
    goal = f"{contract.goal}\n\nKnown facts (from the user):\n{lines}"
    return contract.model_copy(update={"slots": filled, "goal": goal})
