"""Model prices: a reply's usage priced from the run's table; a model without a price counted."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from execgraph.nodes.model.call import ModelTurn, call_model, compact_message
from execgraph.nodes.model.prices import PRICES_KEY, price_table, prices_of, reply_cost

TABLE = price_table({"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}})


def test_a_reply_is_priced_per_million_tokens() -> None:
    assert reply_cost(TABLE, "gpt-4o-mini", 1_000_000, 2_000_000) == pytest.approx(1.35)


@pytest.mark.parametrize("name", ["gpt-4o-mini-2024-07-18", "gpt-4o-mini-20240718"])
def test_a_dated_snapshot_is_priced_by_its_undated_entry(name: str) -> None:
    assert reply_cost(TABLE, name, 1_000_000, 0) == pytest.approx(0.15)


@pytest.mark.parametrize("name", [None, "", "gpt-4o", "gpt-4o-mini-high", "scripted"])
def test_a_model_without_an_entry_has_no_price(name: str | None) -> None:
    assert reply_cost(TABLE, name, 10, 10) is None


def test_the_table_travels_in_the_runs_config() -> None:
    assert prices_of({"configurable": {PRICES_KEY: TABLE}}) == TABLE
    assert prices_of({"configurable": {"thread_id": "t"}}) == {}
    assert prices_of(None) == {}


def _reply(model: str | None, t_in: int, t_out: int) -> AIMessage:
    return AIMessage(
        content="ok",
        usage_metadata={"input_tokens": t_in, "output_tokens": t_out, "total_tokens": t_in + t_out},
        response_metadata={"model_name": model} if model else {},
    )


def _turn(replies: list[AIMessage], config: Any, **kw: Any) -> ModelTurn[str]:
    script = iter(replies)

    def model(messages: list[BaseMessage]) -> AIMessage:
        return next(script)

    def parse(ai: AIMessage) -> tuple[str | None, str | None]:
        return (None, "again") if ai.content == "bad" else (str(ai.content), None)

    return call_model(
        RunnableLambda(model),
        [HumanMessage("hi")],
        parse,
        max_repairs=2,
        left=None,
        run_id="r",
        turn_id="t1",
        config=config,
        **kw,
    )


def test_a_turns_charge_prices_every_reply_repairs_included() -> None:
    bad = _reply("gpt-4o-mini-2024-07-18", 1000, 100).model_copy(update={"content": "bad"})
    turn = _turn([bad, _reply("gpt-4o-mini", 2000, 200)], {"configurable": {PRICES_KEY: TABLE}})
    update = turn.charge("t1:model")
    expected = (3000 * 0.15 + 300 * 0.6) / 1_000_000
    assert update["used"]["cost_usd"] == pytest.approx(expected)
    assert update["used"]["model_calls"] == 2
    assert "unpriced_model_calls" not in update["used"]


def test_an_unpriced_reply_costs_nothing_and_is_counted() -> None:
    turn = _turn([_reply("mystery-model", 1000, 100)], {"configurable": {PRICES_KEY: TABLE}})
    used = turn.charge("t1:model")["used"]
    assert "cost_usd" not in used and used["unpriced_model_calls"] == 1


def test_without_a_price_table_nothing_is_counted_as_unpriced() -> None:
    """A run that prices nothing reports no cost figures at all, not a count per call."""
    used = _turn([_reply("gpt-4o-mini", 1000, 100)], {"configurable": {}}).charge("t1")["used"]
    assert "cost_usd" not in used and "unpriced_model_calls" not in used


def test_a_replayed_reply_costs_what_it_did() -> None:
    logged = _reply("gpt-4o-mini", 4000, 400)
    payload = {"message": compact_message(logged), "tokens_in": 4000, "tokens_out": 400}

    def never(messages: list[BaseMessage]) -> AIMessage:
        raise AssertionError("a logged reply is replayed, not asked again")

    turn = call_model(
        RunnableLambda(never),
        [HumanMessage("hi")],
        lambda ai: (str(ai.content), None),
        max_repairs=0,
        left=None,
        run_id="r",
        turn_id="t1",
        config={"configurable": {PRICES_KEY: TABLE}},
        recorded=lambda seq: payload if seq == 1 else None,
    )
    expected = (4000 * 0.15 + 400 * 0.6) / 1_000_000
    assert turn.charge("t1:model")["used"]["cost_usd"] == pytest.approx(expected)
