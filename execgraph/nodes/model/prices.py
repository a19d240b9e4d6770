"""Model prices: what a reply's token usage costs, from a table the user passes.

Providers bill tokens, not calls, at a price per model that only the user knows (it
changes, and differs by contract), so execgraph ships no prices. The table maps a model
name, as a reply reports it in ``response_metadata["model_name"]``, to USD per million
input and output tokens::

    {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.60}}

A reply that names a dated snapshot (``gpt-4o-mini-2024-07-18``, ``...-20241022``) is
priced by the entry for the undated name when it has none of its own. A reply from a
model without an entry is counted in ``budget["used"]["unpriced_model_calls"]`` instead of
being assumed free. A ``cost_usd`` budget cannot see such a reply, so it is not kept
blind: a task with a ``cost_usd`` budget and no table is refused at admission, and the
first reply without a price ends the run ``BUDGET_EXHAUSTED`` (a free model has an entry
of zeros).

``build_graph(prices=...)`` binds the table into the compiled graph's config under
:data:`PRICES_KEY`, where every node that calls a model (a turn, a planner) finds it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.state.errors import UsageError

__all__ = ["PRICES_KEY", "PRICE_FIELDS", "Prices", "price_table", "prices_of", "reply_cost"]

PRICES_KEY = "execgraph_prices"
"""Where a run's price table sits in ``config["configurable"]``."""

PRICE_FIELDS = ("input_per_mtok", "output_per_mtok")
"""Each entry's fields: USD per million input (prompt) and output (completion) tokens."""

Prices = Mapping[str, Mapping[str, float]]
"""A price table: model name -> ``{"input_per_mtok": usd, "output_per_mtok": usd}``."""

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def price_table(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """A validated copy of ``raw``: both fields per model, finite and not negative.

    Raises:
        UsageError: a missing or unknown field, or a price that is not a number >= 0
            (a typo must not make a model silently free).
    """
    table: dict[str, dict[str, float]] = {}
    for model, entry in raw.items():
        if not isinstance(model, str) or not model or not isinstance(entry, Mapping):
            raise UsageError(f"prices: {model!r} must map a model name to {list(PRICE_FIELDS)}")
        fields = set(entry)
        if fields != set(PRICE_FIELDS):
            missing = sorted(set(PRICE_FIELDS) - fields)
            unknown = sorted(map(str, fields - set(PRICE_FIELDS)))
            raise UsageError(f"prices[{model!r}]: missing {missing}, unknown {unknown}")
        prices = {}
        for name in PRICE_FIELDS:
            value = entry[name]
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                raise UsageError(f"prices[{model!r}][{name!r}] must be a number >= 0")
            prices[name] = float(value)
        table[model] = prices
    return table


def prices_of(config: RunnableConfig | None) -> Prices:
    """The price table bound into a run's config (empty: nothing is priced)."""
    table = ((config or {}).get("configurable") or {}).get(PRICES_KEY)
    return table if isinstance(table, Mapping) else {}


def reply_cost(prices: Prices, model: str | None, tokens_in: int, tokens_out: int) -> float | None:
    """What one reply cost in USD, or None when ``model`` has no price in the table."""
    entry = None
    if model:
        entry = prices.get(model) or prices.get(_SNAPSHOT.sub("", model))
    if entry is None:
        return None
    return (tokens_in * entry["input_per_mtok"] + tokens_out * entry["output_per_mtok"]) / 1_000_000
