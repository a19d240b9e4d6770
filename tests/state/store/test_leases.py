"""Owned records, in every backend: leases, take-over, fencing, one approval decision.

A record in flight is its worker's. Another worker may take it over only once the lease
has expired or its owner is proved gone, and only one of several at once; taking over
bumps the fence, and a commit or restart under the old fence is refused (its locks are
released all the same). Renewing keeps a lease; an approval request keeps its first
decision.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from execgraph.state.errors import FencedOut
from execgraph.state.store import ExecutionStore
from tests.state.store.store_helpers import Opener

OTHER = "elsewhere/1/1/feedbeef"  # a worker on another host: never provably gone
ME = "here/2/2/cafe"


def _reserve(store: ExecutionStore, key: str, owner: str, lease_s: float) -> None:
    store.reserve(
        key,
        run_id="run-1",
        call_id=key,
        tool="pay",
        version="1.0.0",
        args_hash="sha256:abc",
        attempt_id="att-1",
        owner=owner,
        lease_s=lease_s,
    )


def test_a_new_record_is_its_owners_with_a_lease_and_fence_one(store: ExecutionStore) -> None:
    _reserve(store, "k", OTHER, 60.0)
    record = store.get("k")
    assert record is not None and record.owner == OTHER and record.fence == 1
    assert record.lease_until > record.created_at + 30


def test_a_live_lease_is_never_taken_over(store: ExecutionStore) -> None:
    _reserve(store, "k", OTHER, 60.0)
    assert store.take_over("k", ME, attempt_id="att-2", lease_s=60.0) is None
    record = store.get("k")
    assert record is not None and record.owner == OTHER and record.fence == 1


def test_an_expired_lease_is_taken_over_once_and_fences_the_old_owner_out(
    store: ExecutionStore, open_new: Opener
) -> None:
    _reserve(store, "k", OTHER, 0.01)
    store.acquire_locks(["file:a"], f"{OTHER}|k", lease_s=60.0, timeout_s=1.0)
    deadline = time.monotonic() + 30
    takers = [open_new() for _ in range(4)]
    while True:  # the lease runs on the store's clock: wait until one taker sees it expired
        with ThreadPoolExecutor(4) as pool:
            won = list(
                pool.map(
                    lambda i: takers[i].take_over(
                        "k", f"{ME}-{i}", attempt_id=f"att-{i}", lease_s=60.0
                    ),
                    range(4),
                )
            )
        if any(won):
            break
        assert time.monotonic() < deadline
    [taken] = [r for r in won if r is not None]  # exactly one of four takers at once
    assert taken.fence == 2 and taken.attempts == 2 and taken.owner.startswith(ME)

    with pytest.raises(FencedOut, match="taken over"):
        store.commit("k", {"outcome": "succeeded"}, fence=1, release=["file:a"], owner=f"{OTHER}|k")
    with pytest.raises(FencedOut):
        store.restart("k", "att-9", fence=1)
    record = store.get("k")
    assert record is not None and record.state == "started"  # left to its new owner
    store.acquire_locks(["file:a"], "someone", lease_s=1.0, timeout_s=0)  # locks were released

    store.commit("k", {"outcome": "succeeded"}, fence=2)
    record = store.get("k")
    assert record is not None and record.state == "committed"
    # the first commit stands; a fenced-out worker committing later is handed it
    assert store.commit("k", {"outcome": "failed"}, fence=1).result == {"outcome": "succeeded"}


def test_a_gone_owner_is_taken_over_at_once(store: ExecutionStore) -> None:
    _reserve(store, "k", OTHER, 600.0)
    assert store.take_over("k", ME, attempt_id="a2", lease_s=60, gone="else", fence=1) is None
    assert store.take_over("k", ME, attempt_id="a2", lease_s=60, gone=OTHER, fence=7) is None
    taken = store.take_over("k", ME, attempt_id="a2", lease_s=60.0, gone=OTHER, fence=1)
    assert taken is not None and taken.owner == ME and taken.fence == 2


def test_of_two_takers_of_a_dead_attempt_of_one_worker_one_wins(store: ExecutionStore) -> None:
    """A process taking over its own dead attempt leaves the owner as it was: the fence
    is what tells the second taker it came too late."""
    _reserve(store, "k", ME, 600.0)
    first = store.take_over("k", ME, attempt_id="a2", lease_s=60.0, gone=ME, fence=1)
    assert first is not None and first.fence == 2 and first.attempt_id == "a2"
    assert store.take_over("k", ME, attempt_id="a3", lease_s=60.0, gone=ME, fence=1) is None
    store.commit("k", {"outcome": "succeeded"}, fence=2)
    assert store.take_over("k", OTHER, attempt_id="a4", lease_s=60, gone=ME, fence=2) is None


def test_renewing_keeps_only_the_owners_leases(store: ExecutionStore) -> None:
    _reserve(store, "mine", ME, 0.5)
    _reserve(store, "theirs", OTHER, 0.5)
    before = store.get("mine")
    assert before is not None
    assert store.renew_leases(["mine", "theirs", "missing"], ME, lease_s=600.0) == ["mine"]
    after = store.get("mine")
    assert after is not None and after.lease_until > before.lease_until + 60
    assert store.take_over("mine", OTHER, attempt_id="x", lease_s=1.0) is None


def test_an_approval_request_keeps_its_first_decision(
    store: ExecutionStore, open_new: Opener
) -> None:
    others = [open_new() for _ in range(4)]
    answers = [{"action": "approve" if i % 2 else "reject", "who": i} for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        stands = list(pool.map(lambda i: others[i].decide_approval("req-1", answers[i]), range(4)))
    assert all(s == stands[0] for s in stands) and stands[0] in answers
    assert store.decide_approval("req-1", {"action": "edit"}) == stands[0]
    assert store.decide_approval("req-2", {"action": "edit"}) == {"action": "edit"}
