"""Reserving a batch's execution records in one transaction (every backend)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from execgraph.state.errors import StoreError
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store import Claim, ExecutionStore
from tests.state.store.store_helpers import Opener, reserve


def _claim(key: str, call_id: str = "", **overrides: str) -> Claim:
    fields = {
        "run_id": "run-1",
        "call_id": call_id or f"call-{key}",
        "tool": "look",
        "version": "1.0.0",
        "args_hash": f"sha256:{key}",
        "attempt_id": "att-1",
    }
    fields.update(overrides)
    return Claim(key=key, **fields)


def test_reserve_all_answers_each_claim_in_order(store: ExecutionStore) -> None:
    reserve(store, "old", call_id="call-old")
    reserve(store, "done", call_id="call-done", tool="look", args_hash="sha256:done")
    store.commit("done", {"status": "OK"})

    got = store.reserve_all([_claim("a"), _claim("old"), _claim("b"), _claim("done")])

    assert [r.fresh for r in got] == [True, False, True, False]
    assert [r.record.idempotency_key for r in got] == ["a", "old", "b", "done"]
    assert got[1].record.call_id == "call-old" and got[1].record.state == "started"
    assert got[3].record.state == "committed" and got[3].record.result == {"status": "OK"}
    assert got[0].record.state == "started" and got[0].record.call_id == "call-a"
    assert [r.call_id for r in store.pending("run-1")] == ["call-old", "call-a", "call-b"]


def test_reserve_all_of_nothing_is_nothing(store: ExecutionStore) -> None:
    assert store.reserve_all([]) == []


def test_a_batch_reserves_all_or_nothing(store: ExecutionStore, open_new: Opener) -> None:
    broken = _claim("c", run_id=cast(Any, None))  # violates NOT NULL inside the transaction
    with pytest.raises(StoreError, match="reserve execution records"):
        store.reserve_all([_claim("a"), _claim("b"), broken])
    other = open_new()
    assert other.get("a") is None and other.get("b") is None
    assert [r.fresh for r in store.reserve_all([_claim("a"), _claim("b")])] == [True, True]


def test_a_non_durable_batch_is_seen_by_every_worker(
    store: ExecutionStore, open_new: Opener
) -> None:
    store.reserve_all([_claim("a"), _claim("b")], durable=False)
    other = open_new()
    assert [r.fresh for r in other.reserve_all([_claim("b"), _claim("a")])] == [False, False]


def _decision(seq: int) -> Event:
    return make_event(EventType.DECISION_RECORDED, "run-1", turn_id="t1", seq=seq or None)


def test_the_log_lands_with_the_records_before_them(
    store: ExecutionStore, open_new: Opener
) -> None:
    log = [_decision(0), _decision(1)]
    store.reserve_all([_claim("a")], durable=False, log=log)
    other = open_new()  # another worker sees both at once
    assert [e.event_id for e in other.events("run-1")] == [e.event_id for e in log]
    assert other.get("a") is not None


def test_the_log_is_rolled_back_with_a_failed_batch(
    store: ExecutionStore, open_new: Opener
) -> None:
    broken = _claim("c", run_id=cast(Any, None))
    with pytest.raises(StoreError, match="reserve execution records"):
        store.reserve_all([_claim("a"), broken], log=[_decision(0)])
    assert open_new().events("run-1") == []


def test_a_log_with_no_claims_is_still_appended(store: ExecutionStore) -> None:
    assert store.reserve_all([], log=[_decision(0)]) == []
    assert [e.type for e in store.events("run-1")] == [EventType.DECISION_RECORDED]
