"""Conformance of the store's append-only half on every backend: events, artifacts and
approval tokens (see ``test_conformance.py`` for records, locks and races)."""

from __future__ import annotations

import pytest

from execgraph.state.errors import StoreError
from execgraph.state.events import EventType, make_event
from execgraph.state.store import ExecutionStore
from tests.state.store.store_helpers import Opener

# -- events -------------------------------------------------------------------------


def test_events_dedupe_order_and_filter(store: ExecutionStore, open_new: Opener) -> None:
    e1 = make_event(EventType.TOOL_REQUESTED, "run-1", call_id="c1", payload={"a": [1, 2]})
    e2 = make_event(EventType.TOOL_REQUESTED, "run-1", call_id="c2", turn_id="t1")
    e3 = make_event(EventType.TOOL_OUTPUT, "run-1", call_id="c1", attempt_id="a1", seq=0)
    other_run = make_event(EventType.RUN_ADMITTED, "run-2")
    assert store.append_events([e1, e2]) == [e1.event_id, e2.event_id]
    assert store.append_events([e2, e3, e3, other_run]) == [e3.event_id, other_run.event_id]
    assert store.append_events([]) == []

    reader = open_new()
    assert reader.events("run-1") == [e1, e2, e3]
    assert reader.events("run-1", call_id="c1") == [e1, e3]
    assert reader.events("run-2") == [other_run]
    assert reader.events("run-none") == []
    assert reader.events("run-1")[0].payload == {"a": [1, 2]}


def test_a_batch_longer_than_one_statement_keeps_order_and_dedupes(
    store: ExecutionStore, open_new: Opener
) -> None:
    """1,201 events span three insert statements; ids come back in order, each once."""
    events = [
        make_event(EventType.TOOL_OUTPUT, "run-1", call_id="c1", attempt_id="a1", seq=i)
        for i in range(1201)
    ]
    first = events[:700]
    assert store.append_events(first) == [e.event_id for e in first]
    again = [*events[650:], events[1200], events[0]]  # 50 known, 501 new, 1 repeated, 1 known
    assert store.append_events(again) == [e.event_id for e in events[700:]]
    assert open_new().events("run-1") == events


# -- artifacts and approval tokens ----------------------------------------------------


def test_artifacts_round_trip_and_dedupe(store: ExecutionStore, open_new: Opener) -> None:
    blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
    ref = store.put_artifact(blob, kind="stdout", run_id="run-1")
    assert ref.startswith("sha256:") and len(ref) == len("sha256:") + 64
    assert store.put_artifact(blob, kind="page", run_id="run-2") == ref
    assert store.put_artifact(b"", kind="empty") != ref
    assert open_new().get_artifact(ref) == blob
    assert store.get_artifact(store.put_artifact(b"", kind="empty")) == b""
    with pytest.raises(KeyError):
        store.get_artifact("sha256:" + "0" * 64)


def test_approval_tokens_are_single_use(store: ExecutionStore, open_new: Opener) -> None:
    assert store.use_approval_token("tok-1") is True
    assert store.use_approval_token("tok-1") is False
    assert open_new().use_approval_token("tok-1") is False
    assert store.use_approval_token("tok-2") is True


def test_closed_store_raises_store_error(open_new: Opener) -> None:
    store = open_new()
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.get("k1")
