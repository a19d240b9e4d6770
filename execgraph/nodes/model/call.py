"""One model turn: call, parse, and repair malformed output a bounded number of times.

Every call — repairs included — is counted (model calls, tokens, cost from the run's price
table) and logged as a ``model.called`` event with the reply, so a run's model outputs can
be replayed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.errors import GraphBubbleUp

from execgraph.nodes.budget import charge
from execgraph.nodes.model.prices import Prices, prices_of, reply_cost
from execgraph.state.diagnostics import describe, http_problem, logger
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store.base import ExecutionStore
from execgraph.state.surrogates import has_surrogate, scrub_surrogates

__all__ = [
    "ModelTurn",
    "Recorded",
    "call_model",
    "compact_message",
    "recorded_replies",
    "reply_model",
    "unstorable",
]

Recorded = Callable[[int], Mapping[str, Any] | None]
"""The payload of a turn's ``seq``-th ``model.called`` event, if one was logged."""

_INT64 = 2**63
_log = logger("model")

T = TypeVar("T")


@dataclass
class ModelTurn(Generic[T]):
    """What one turn produced: the accepted reply and its parse, or the last problem.

    ``prices`` is the run's price table (:mod:`execgraph.nodes.model.prices`); the turn's cost
    is priced from its ``model.called`` events, so a replayed turn costs what it did.
    """

    ai: AIMessage
    parsed: T | None
    problem: str | None
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    events: list[Event] = field(default_factory=list)
    prices: Prices = field(default_factory=dict)

    def cost(self) -> tuple[float, int]:
        """USD this turn's replies cost, and how many of them had no price (costed 0)."""
        usd, unpriced = 0.0, 0
        for event in self.events:
            if event.type is not EventType.MODEL_CALLED:
                continue
            payload = event.payload
            cost = reply_cost(
                self.prices,
                reply_model(payload.get("message") or {}),
                int(payload.get("tokens_in", 0)),
                int(payload.get("tokens_out", 0)),
            )
            if cost is None:
                unpriced += 1 if self.prices else 0  # without a table, nothing is priced
            else:
                usd += cost
        return usd, unpriced

    def charge(self, charge_id: str) -> dict[str, Any]:
        """The budget update for this turn: calls, tokens and cost (unpriced calls counted)."""
        usd, unpriced = self.cost()
        return charge(
            charge_id,
            model_calls=self.calls,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=usd,
            unpriced_model_calls=unpriced,
        )


def reply_model(message: Mapping[str, Any]) -> str | None:
    """The model a logged reply (``compact_message`` form) says answered it, if any."""
    meta = (message.get("data") or {}).get("response_metadata") or {}
    name = meta.get("model_name") or meta.get("model")
    return name if isinstance(name, str) else None


def unstorable(value: Any) -> bool:
    """True when ``value`` holds a number no checkpoint can store (beyond 64 bits).

    Valid JSON from a model may carry any integer; one that cannot be serialized must be
    repaired by the model, not crash the run.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -_INT64 <= value < _INT64
    if isinstance(value, dict):
        return any(unstorable(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(unstorable(v) for v in value)
    return False


def _repair(ai: AIMessage, problem: str) -> list[BaseMessage]:
    if has_surrogate(ai.tool_calls):  # the model is shown what a request can carry
        ai = ai.model_copy(update={"tool_calls": scrub_surrogates(ai.tool_calls)})
    calls = [*ai.tool_calls, *ai.invalid_tool_calls]
    replies: list[BaseMessage] = [
        ToolMessage(content=f"rejected: {problem}", tool_call_id=str(c.get("id")), status="error")
        for c in calls
        if c.get("id")
    ]
    return [
        ai,
        *replies,
        HumanMessage(f"Your previous reply was malformed: {problem}. Reply again."),
    ]


def compact_message(message: BaseMessage) -> dict[str, Any]:
    """``message_to_dict`` without the empty fields (they come back as defaults on load):
    what is stored of every model reply, in state's transcript and in the event log."""
    dumped = message_to_dict(message)
    data = {k: v for k, v in dumped["data"].items() if v not in (None, "", [], {}, False)}
    return {"type": dumped["type"], "data": {"content": "", **data}}


def recorded_replies(store: ExecutionStore, run_id: str, turn_id: str) -> Recorded:
    """Look up the replies a turn already logged, by their deterministic event ids."""

    def recorded(seq: int) -> Mapping[str, Any] | None:
        event_id = make_event(EventType.MODEL_CALLED, run_id, turn_id=turn_id, seq=seq).event_id
        event = store.event(event_id)
        return None if event is None else event.payload

    return recorded


def _reply(
    bound: Runnable[Any, Any],
    messages: list[BaseMessage],
    config: RunnableConfig | None,
    logged: Mapping[str, Any] | None,
) -> tuple[AIMessage, int, int]:
    """The reply and its token counts: the logged one if any, else a new model call."""
    if logged is not None:
        [message] = messages_from_dict([dict(logged["message"])])
        ai = message if isinstance(message, AIMessage) else AIMessage(content=message.content)
        return ai, int(logged.get("tokens_in", 0)), int(logged.get("tokens_out", 0))
    reply = bound.invoke(messages, config)
    ai = reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply.content))
    meta: dict[str, Any] = dict(ai.usage_metadata or {})
    return ai, _tokens(meta, "input_tokens"), _tokens(meta, "output_tokens")


class UnusableUsage(Exception):
    """A reply reported token usage no budget can count (negative, not finite, not a
    number): the call is charged and its turn fails, never refunded."""


def _tokens(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key, 0)
    if value is None:
        return 0
    countable = isinstance(value, int | float) and not isinstance(value, bool)
    if not countable or not math.isfinite(value) or value < 0:
        raise UnusableUsage(
            f"the model's reply reported {key} = {value!r}; token counts are whole numbers "
            ">= 0, so the reply was refused"
        )
    return int(value)


def _provider_failure(exc: Exception, run_id: str, turn_id: str) -> str:
    """The problem a failed model call ends its turn with: for an HTTP error, its status,
    the provider's message and the URL without credentials; else the type alone (its text
    may hold anything). The whole exception, bounded and scrubbed, goes to the logger."""
    described = describe(exc)
    _log.error(
        "the model call of run %s, turn %s raised %s: %s\n%s",
        run_id,
        turn_id,
        described["type"],
        described["message"],
        described["traceback"],
    )
    problem = http_problem(exc)
    return (
        f"the model call failed: {problem}"
        if problem
        else f"the model call failed ({type(exc).__name__})"
    )


def call_model(
    bound: Runnable[Any, Any],
    messages: list[BaseMessage],
    parse: Callable[[AIMessage], tuple[T | None, str | None]],
    *,
    max_repairs: int,
    left: float | None,
    run_id: str,
    turn_id: str,
    config: RunnableConfig | None = None,
    recorded: Recorded | None = None,
    redact: Callable[[AIMessage], AIMessage] | None = None,
) -> ModelTurn[T]:
    """Call ``bound`` until ``parse`` accepts a reply, up to ``max_repairs`` extra calls.

    ``left`` is the model-call budget remaining (None: unlimited); no call exceeds it.
    A provider exception ends the turn with a problem naming its type (and, for an HTTP
    error, its status, message and URL without credentials); LangGraph's own signals
    (``GraphBubbleUp``: an ``interrupt()`` in the model or a callback) pass.

    With ``recorded``, a reply this turn already logged is used instead of a new call: a
    node that re-runs after a crash (its checkpoint never written) then makes the same
    decisions the event log shows, about calls that may already have run.

    ``redact`` rewrites each reply as it arrives, before it is parsed, logged or kept
    (secret arguments, :mod:`execgraph.state.secret_args`).
    """
    turn: ModelTurn[T] = ModelTurn(
        AIMessage(content=""), None, "no model call made", prices=prices_of(config)
    )
    while turn.calls <= max_repairs and (left is None or turn.calls < left):
        turn.calls += 1
        logged = recorded(turn.calls) if recorded is not None else None
        try:
            ai, t_in, t_out = _reply(bound, messages, config, logged)
        except AssertionError:
            raise  # a test double's loud failure (an exhausted script) is not a provider error
        except GraphBubbleUp:
            raise  # interrupt() inside the model or a callback: LangGraph pauses the run
        except UnusableUsage as exc:  # the call happened: it counts, its reply does not
            _log.error("run %s, turn %s: %s", run_id, turn_id, exc)
            turn.problem = str(exc)
            break
        except Exception as exc:  # a provider failure is reported, never shown raw
            turn.problem = _provider_failure(exc, run_id, turn_id)
            break
        if redact is not None:
            ai = redact(ai)
        turn.ai, turn.tokens_in, turn.tokens_out = (
            ai,
            turn.tokens_in + t_in,
            turn.tokens_out + t_out,
        )
        turn.parsed, turn.problem = parse(ai)
        if logged is not None and logged.get("refused"):
            # The log keeps what it can store of a reply (a lone surrogate as its escape),
            # so a replayed turn refuses what the first run refused, as the log says.
            turn.parsed, turn.problem = None, str(logged["refused"])
        payload = {"message": compact_message(ai), "tokens_in": t_in, "tokens_out": t_out}
        if turn.problem is not None:
            payload["refused"] = turn.problem
        turn.events.append(
            make_event(
                EventType.MODEL_CALLED, run_id, turn_id=turn_id, seq=turn.calls, payload=payload
            )
        )
        if turn.problem is None:
            break
        messages = [*messages, *_repair(ai, turn.problem)]
    return turn
