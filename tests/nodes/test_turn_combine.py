"""One node's partial updates fold into one write the way the reducers would fold them."""

from __future__ import annotations

from execgraph.nodes.turn import combine
from execgraph.state.reducers import REPLAY_WINDOW, dedupe_events


def test_combined_updates_keep_every_event_and_add_budgets() -> None:
    first = {
        "events": {"recent": [f"a{i}" for i in range(REPLAY_WINDOW)]},
        "budget": {"used": {"model_calls": 1}, "charges": ["t1:model"]},
        "turn": 1,
    }
    second = {
        "events": {"recent": [f"b{i}" for i in range(REPLAY_WINDOW)]},
        "budget": {"used": {"tool_calls": 3}, "charges": ["t1:dispatch"]},
        "results": {"c1": {"call_id": "c1"}},
        "turn": 1,
    }
    merged = combine(first, second)
    # The channel's reducer windows the ids; the count must see all of them.
    assert dedupe_events(None, merged["events"])["count"] == 2 * REPLAY_WINDOW
    assert merged["budget"]["used"] == {"model_calls": 1, "tool_calls": 3}
    assert merged["results"] == {"c1": {"call_id": "c1"}} and merged["turn"] == 1
