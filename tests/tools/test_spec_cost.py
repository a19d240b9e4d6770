"""A tool's declared cost per call: a number >= 0, or a declaration error."""

from __future__ import annotations

import pytest

from execgraph.state.errors import ToolDeclarationError
from execgraph.tools import tool_spec


def test_a_tool_declares_its_cost_per_call() -> None:
    @tool_spec(cost_usd=0.01)
    def search(q: str) -> str:
        """Search a paid index."""
        return q

    assert search.cost_usd == 0.01
    assert search.with_(version="2.0.0").cost_usd == 0.01


@pytest.mark.parametrize("cost", [-0.01, float("nan"), float("inf"), "0.01"])
def test_a_cost_that_is_no_price_is_refused(cost: object) -> None:
    with pytest.raises(ToolDeclarationError, match="cost_usd"):

        @tool_spec(cost_usd=cost)  # type: ignore[arg-type]
        def search(q: str) -> str:
            """Search a paid index."""
            return q
