"""The budget table shows cost, and the model calls the cost leaves out for want of a price."""

from __future__ import annotations

from rich.console import Console

from execgraph.cli.render import budget_table


def _text(used: dict[str, float], limits: dict[str, float]) -> str:
    console = Console(width=100, record=True)
    console.print(budget_table({"used": used, "charges": []}, limits))
    return console.export_text()


def test_unpriced_model_calls_are_shown_under_the_cost() -> None:
    text = _text({"model_calls": 3, "cost_usd": 0.02, "unpriced_model_calls": 2}, {"cost_usd": 1})
    assert "cost_usd" in text and "0.02" in text
    assert "model calls without a price" in text and " 2 " in text


def test_without_a_cost_row_nothing_is_said_about_prices() -> None:
    text = _text({"model_calls": 3, "unpriced_model_calls": 3}, {})
    assert "price" not in text and "unpriced" not in text
