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
  model is not called once it is over;
- ``cost_usd``: each model reply priced from its tokens by the price table the middleware
  is given (``prices=``, :mod:`execgraph.nodes.model.prices`: USD per million tokens by
  the model name the reply reports), plus what a tool declares one call of it costs
  (``tool_spec(cost_usd=...)``), charged when it runs. A call whose declared cost does not
  fit what is left is refused before it runs (the calls the model made before it in its
  turn counted as spent). A reply of a model the table has no price for is counted in
  ``unpriced_model_calls``: the budget cannot see what it cost, so it counts as spent, and
  a ``cost_usd`` budget without a table is refused when the middleware is made.

A run that ran out ends before its next model call with ``execgraph_status`` set to
``{"status": "budget_exhausted", "exhausted": [...], "used": {...}, "limits": {...}}``
and a last ``AIMessage`` saying so; a run that ends on its own sets ``{"status":
"completed", ...}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.types import Command

from execgraph.nodes.model.prices import Prices, price_table, reply_cost
from execgraph.state.contracts import BudgetKind
from execgraph.state.errors import UsageError

__all__ = ["REFUSED", "RESET", "UNPRICED", "Budgets", "add_usage", "model_usage"]

RESET = "__reset__"
"""A usage update carrying this key replaces the usage instead of adding to it."""

_KINDS = {
    BudgetKind.TOOL_CALLS.value,
    BudgetKind.MODEL_CALLS.value,
    BudgetKind.TOKENS_IN.value,
    BudgetKind.TOKENS_OUT.value,
    BudgetKind.WALL_TIME_S.value,
    BudgetKind.COST_USD.value,
}
_COST = BudgetKind.COST_USD.value
UNPRICED = "unpriced_model_calls"
"""Usage kind: model replies the price table has no price for."""

REFUSED = "_refused"
"""Usage kinds ``tool_calls_refused``, ``cost_usd_refused``: tool calls refused because
that budget was spent (or, for cost, would be by the call)."""


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
    """The limits per kind (a kind not given is unlimited), and the price table."""

    limits: Mapping[str, float]
    prices: Prices = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        limits: Mapping[str, float] | None,
        prices: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Budgets:
        """Limits and prices checked once, when the middleware is made.

        Raises:
            UsageError: an unknown kind, a limit that is not a positive number, a price
                table that is not one (:func:`~execgraph.nodes.model.prices.price_table`),
                or a ``cost_usd`` budget without prices.
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
        table = price_table(prices or {})
        if _COST in checked and not table:
            raise UsageError(
                "a cost_usd budget needs the price of the model's replies: pass "
                'prices={"<model name>": {"input_per_mtok": ..., "output_per_mtok": ...}}'
            )
        return cls(checked, table)

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
        out += [k for k in self.limits if k not in out and used.get(k + REFUSED, 0) > 0]
        if _COST in self.limits and _COST not in out and used.get(UNPRICED, 0) > 0:
            out.append(_COST)  # the budget cannot see what those replies cost
        return out

    def deadline(self, state: Mapping[str, Any]) -> float | None:
        """When the run's wall time is up (epoch seconds; None: no such budget)."""
        limit = self.limits.get(BudgetKind.WALL_TIME_S.value)
        started = state.get("execgraph_started_at")
        if limit is None or not started:
            return None
        return float(started) + limit

    def refuses_call(
        self, state: Mapping[str, Any], tool_call_id: str | None, cost_of: Callable[[str], float]
    ) -> str | None:
        """The budget the model's call ``tool_call_id`` does not fit, or None.

        ``tool_calls``: the calls used before its turn, plus the calls the model made
        before it in that turn, are not fewer than the limit. ``cost_usd``: the cost spent,
        plus what the calls before it in the turn and it itself declare (``cost_of`` a
        tool name), is over the limit, or a reply had no price.
        """
        earlier, own = _turn_calls(state, tool_call_id)
        used = self.used(state)
        limit = self.limits.get(BudgetKind.TOOL_CALLS.value)
        if limit is not None and used.get(BudgetKind.TOOL_CALLS.value, 0) + len(earlier) >= limit:
            return BudgetKind.TOOL_CALLS.value
        limit = self.limits.get(_COST)
        if limit is None:
            return None
        declared = sum(cost_of(name) for name in (*earlier, own) if name)
        if used.get(UNPRICED, 0) > 0 or used.get(_COST, 0) + declared > limit:
            return _COST
        return None

    def model_usage(self, message: Any) -> dict[str, float]:
        """What one model reply spent: one call, its tokens when the provider said, and
        their price (or one unpriced reply) when there is a price table."""
        usage = model_usage(message)
        if not self.prices:
            return usage
        meta = getattr(message, "response_metadata", None) or {}
        name = meta.get("model_name") or meta.get("model")
        cost = reply_cost(
            self.prices,
            name if isinstance(name, str) else None,
            int(usage.get(BudgetKind.TOKENS_IN.value, 0)),
            int(usage.get(BudgetKind.TOKENS_OUT.value, 0)),
        )
        if cost is None:
            usage[UNPRICED] = 1
        else:
            usage[_COST] = cost
        return usage

    def counted(self, response: ModelResponse[Any] | AIMessage) -> ExtendedModelResponse[Any]:
        """The model's ``response``, with what it spent as the run's usage update."""
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        reply = next((m for m in response.result if isinstance(m, AIMessage)), None)
        update = {"execgraph_usage": self.model_usage(reply)}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

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


def _turn_calls(state: Mapping[str, Any], tool_call_id: str | None) -> tuple[list[str], str]:
    """The names of the calls the model made before ``tool_call_id`` in the last reply
    that made it, and its own name (all of that reply's calls when none is it)."""
    for message in reversed(state.get("messages") or []):
        calls = getattr(message, "tool_calls", None)
        if not calls:
            continue
        names = [str(c.get("name") or "") for c in calls]
        ids = [c.get("id") for c in calls]
        if tool_call_id in ids:
            at = ids.index(tool_call_id)
            return names[:at], names[at]
        return names, ""
    return [], ""


def model_usage(message: Any) -> dict[str, float]:
    """What one model reply spent: one call, and its tokens when the provider said."""
    usage: dict[str, float] = {BudgetKind.MODEL_CALLS.value: 1}
    meta = getattr(message, "usage_metadata", None) or {}
    if meta.get("input_tokens"):
        usage[BudgetKind.TOKENS_IN.value] = float(meta["input_tokens"])
    if meta.get("output_tokens"):
        usage[BudgetKind.TOKENS_OUT.value] = float(meta["output_tokens"])
    return usage
