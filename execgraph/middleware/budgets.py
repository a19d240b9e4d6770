"""Budgets across one run of the agent, and the end state a caller reads when one runs out.

A run is one ``invoke`` of the agent with an input (a resume or a re-run from a
checkpoint continues the run it belongs to). Its usage is kept in the agent's own state,
``execgraph_usage`` (added per kind by its reducer, so parallel tool calls each add their
own), and the wall clock from ``execgraph_started_at``:

- ``tool_calls``: a call past the limit is refused before it runs (the model's calls of
  one turn count in the order the model made them), and the run then ends;
- ``model_calls``, ``tokens_in``, ``tokens_out`` (from each reply's ``usage_metadata``):
  counted after each model call; once one is reached the model is not called again;
- ``wall_time_s``: counted from the run's start, a pause for a person included; the
  time left is each tool call's deadline (the executor stops a tool at it), and the
  model is not called once it is over.

A run that ran out ends before its next model call with ``execgraph_status`` set to
``{"status": "budget_exhausted", "exhausted": [...], "used": {...}, "limits": {...}}``
and a last ``AIMessage`` saying so; a run that ends on its own sets ``{"status":
"completed", ...}``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.types import Command

from execgraph.state.contracts import BudgetKind
from execgraph.state.errors import UsageError

__all__ = ["RESET", "Budgets", "add_usage", "counted", "model_usage"]

RESET = "__reset__"
"""A usage update carrying this key replaces the usage instead of adding to it."""

_KINDS = {
    BudgetKind.TOOL_CALLS.value,
    BudgetKind.MODEL_CALLS.value,
    BudgetKind.TOKENS_IN.value,
    BudgetKind.TOKENS_OUT.value,
    BudgetKind.WALL_TIME_S.value,
}

REFUSED = "tool_calls_refused"
"""Usage kind: tool calls refused because the ``tool_calls`` budget was spent."""


def add_usage(
    left: Mapping[str, float] | None, right: Mapping[str, float] | None
) -> dict[str, float]:
    """The usage channel's reducer: per-kind sums (a ``RESET`` update starts over)."""
    if right and RESET in right:
        return {k: v for k, v in right.items() if k != RESET}
    out = dict(left or {})
    for kind, amount in (right or {}).items():
        out[kind] = out.get(kind, 0) + amount
    return out


@dataclass(frozen=True)
class Budgets:
    """The limits per kind (a kind not given is unlimited)."""

    limits: Mapping[str, float]

    @classmethod
    def of(cls, limits: Mapping[str, float] | None) -> Budgets:
        """Limits checked once, when the middleware is made.

        Raises:
            UsageError: an unknown kind, or a limit that is not a positive number.
        """
        checked: dict[str, float] = {}
        for kind, limit in (limits or {}).items():
            if kind not in _KINDS:
                raise UsageError(
                    f"unknown budget {kind!r}: choose among {', '.join(sorted(_KINDS))}"
                )
            if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
                raise UsageError(f"budget {kind!r} takes a positive number")
            checked[kind] = float(limit)
        return cls(checked)

    def start(self) -> dict[str, Any]:
        """The state update that starts a run's budgets."""
        return {
            "execgraph_usage": {RESET: 1},
            "execgraph_started_at": time.time(),
            "execgraph_status": None,
        }

    def used(self, state: Mapping[str, Any]) -> dict[str, float]:
        """Usage so far, wall time included."""
        usage = dict(state.get("execgraph_usage") or {})
        started = state.get("execgraph_started_at")
        if started:
            usage[BudgetKind.WALL_TIME_S.value] = round(time.time() - float(started), 3)
        return usage

    def exhausted(self, state: Mapping[str, Any]) -> list[str]:
        """Kinds whose limit is reached (``tool_calls`` once a call was refused for it)."""
        used = self.used(state)
        out = [
            kind
            for kind, limit in self.limits.items()
            if kind != BudgetKind.TOOL_CALLS.value and used.get(kind, 0) >= limit
        ]
        if used.get(REFUSED, 0) > 0:
            out.append(BudgetKind.TOOL_CALLS.value)
        return out

    def deadline(self, state: Mapping[str, Any]) -> float | None:
        """When the run's wall time is up (epoch seconds; None: no such budget)."""
        limit = self.limits.get(BudgetKind.WALL_TIME_S.value)
        started = state.get("execgraph_started_at")
        if limit is None or not started:
            return None
        return float(started) + limit

    def admits_call(self, state: Mapping[str, Any], tool_call_id: str | None) -> bool:
        """Whether the model's call ``tool_call_id`` is within the ``tool_calls`` budget:
        the calls used before its turn, plus the calls the model made before it in that
        turn, are fewer than the limit."""
        limit = self.limits.get(BudgetKind.TOOL_CALLS.value)
        if limit is None:
            return True
        before = self.used(state).get(BudgetKind.TOOL_CALLS.value, 0)
        return before + _position(state, tool_call_id) < limit

    def stop(self, state: Mapping[str, Any]) -> ExtendedModelResponse[Any] | None:
        """In place of a model call the budgets no longer allow: a last message saying so,
        the end state, and the run's end (None: the call is allowed)."""
        exhausted = self.exhausted(state)
        if not exhausted:
            return None
        text = f"Stopped: the run's budget is spent ({', '.join(exhausted)})."
        update = {"execgraph_status": self.status(state, exhausted), "jump_to": "end"}
        return ExtendedModelResponse(
            model_response=ModelResponse(result=[AIMessage(text)]),
            command=Command(update=update),
        )

    def status(self, state: Mapping[str, Any], exhausted: list[str]) -> dict[str, Any]:
        """The end state a caller reads (``execgraph_status``)."""
        return {
            "status": "budget_exhausted" if exhausted else "completed",
            "exhausted": exhausted,
            "used": self.used(state),
            "limits": dict(self.limits),
        }


def _position(state: Mapping[str, Any], tool_call_id: str | None) -> int:
    """Where the call stands among the calls of the last model reply that made it."""
    for message in reversed(state.get("messages") or []):
        calls = getattr(message, "tool_calls", None)
        if not calls:
            continue
        ids = [c.get("id") for c in calls]
        if tool_call_id in ids:
            return ids.index(tool_call_id)
        return len(ids)
    return 0


def counted(response: ModelResponse[Any] | AIMessage) -> ExtendedModelResponse[Any]:
    """The model's ``response``, with what it spent as the run's usage update."""
    if isinstance(response, AIMessage):
        response = ModelResponse(result=[response])
    reply = next((m for m in response.result if isinstance(m, AIMessage)), None)
    update = {"execgraph_usage": model_usage(reply)}
    return ExtendedModelResponse(model_response=response, command=Command(update=update))


def model_usage(message: Any) -> dict[str, float]:
    """What one model reply spent: one call, and its tokens when the provider said."""
    usage: dict[str, float] = {BudgetKind.MODEL_CALLS.value: 1}
    meta = getattr(message, "usage_metadata", None) or {}
    if meta.get("input_tokens"):
        usage[BudgetKind.TOKENS_IN.value] = float(meta["input_tokens"])
    if meta.get("output_tokens"):
        usage[BudgetKind.TOKENS_OUT.value] = float(meta["output_tokens"])
    return usage
