"""Conformance of ``settle_unknown`` on every backend: a committed ``unknown`` result is the
one a person's verdict may replace, once, with its event; nothing else changes."""

from __future__ import annotations

import pytest

from execgraph.state.errors import StoreError
from execgraph.state.events import EventType, make_event
from execgraph.state.store import ExecutionStore
from tests.state.store.store_helpers import Opener, reserve

UNKNOWN = {"call_id": "call-1", "outcome": "unknown", "status": "UNKNOWN"}
HAPPENED = {"call_id": "call-1", "outcome": "succeeded", "status": "OK"}


def test_an_unknown_result_is_replaced_with_its_event(
    store: ExecutionStore, open_new: Opener
) -> None:
    reserve(store)
    store.commit("k1", UNKNOWN)
    event = make_event(EventType.TOOL_SETTLED, "run-1", call_id="call-1", payload={"by": "a"})
    settled = store.settle_unknown("k1", HAPPENED, events=[event])
    assert settled.result == HAPPENED and settled.state == "committed"
    reader = open_new()
    record = reader.get("k1")
    assert record is not None and record.result == HAPPENED
    assert reader.events("run-1") == [event]


def test_only_an_unknown_committed_result_can_be_settled(store: ExecutionStore) -> None:
    reserve(store)
    with pytest.raises(StoreError, match="no committed execution record"):
        store.settle_unknown("k1", HAPPENED)  # still started
    with pytest.raises(StoreError, match="no committed execution record"):
        store.settle_unknown("missing", HAPPENED)
    store.commit("k1", UNKNOWN)
    store.settle_unknown("k1", HAPPENED)
    with pytest.raises(StoreError, match="'succeeded', not unknown"):
        store.settle_unknown("k1", {**HAPPENED, "outcome": "failed"})  # a second verdict
    record = store.get("k1")
    assert record is not None and record.result == HAPPENED
