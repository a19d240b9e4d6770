"""Property tests (hypothesis) for the reducers: order-insensitive for distinct keys,
a replayed update counts once, inputs never mutated (see DESIGN.md section 6)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from execgraph.state.reducers import (
    REPLAY_WINDOW,
    add_budget,
    budget_batch,
    dedupe_events,
    events_batch,
    fold_progress,
    history_batch,
    latest_batch,
    merge_evidence,
    merge_results,
    progress_batch,
    replace_plan_if_newer,
    results_batch,
    sticky_status,
)
from tests.state.reducer_helpers import NON_TERMINAL, TERMINAL, ev, plan, result

PROPS = settings(max_examples=75, deadline=None)


ids = st.text(alphabet="abcdefgh0123", min_size=1, max_size=4)
small_ints = st.integers(min_value=0, max_value=1000)
json_scalars = st.one_of(st.none(), st.booleans(), small_ints, st.text(max_size=5))


def _split(items: list, cuts: list[int]) -> list[list]:
    """Split ``items`` into ``len(cuts) + 1`` consecutive (possibly empty) chunks."""
    bounds = [0, *sorted(c % (len(items) + 1) for c in cuts), len(items)]
    return [items[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def distinct_evidence_updates(draw: st.DrawFn, n: int = 3) -> list[list[dict[str, Any]]]:
    """``n`` evidence updates whose source ids are distinct across all of them."""
    sources = draw(st.lists(ids, unique=True, max_size=12))
    items = [
        ev(s, draw(json_scalars), version=draw(st.integers(1, 5)), verified=draw(st.booleans()))
        for s in sources
    ]
    chunks = _split(items, draw(st.lists(st.integers(0, 20), min_size=n - 1, max_size=n - 1)))
    return [draw(st.permutations(chunk)) for chunk in chunks]


# Items where the value is a function of (source_id, version): no same-version conflict
# can arise, so evidence merging is a join (max version per source) and fully order-free.
versioned_item = st.builds(
    lambda s, v: ev(s, f"{s}@{v}", version=v), st.sampled_from("abcde"), st.integers(1, 6)
)
# Arbitrary items, conflicts included.
any_item = st.builds(
    lambda s, v, x: ev(s, x, version=v), st.sampled_from("abc"), st.integers(1, 3), json_scalars
)


def _as_update(items: list[dict[str, Any]], as_dict: bool) -> Any:
    if not as_dict:
        return items
    # A dict update keyed by source id (last item per source, as a node would build it).
    return {item["source_id"]: item for item in items}


class TestEvidenceProperties:
    @PROPS
    @given(distinct_evidence_updates(n=2))
    def test_commutative_for_distinct_sources(self, updates: list[list[dict]]) -> None:
        a, b = updates
        assert merge_evidence(merge_evidence({}, a), b) == merge_evidence(merge_evidence({}, b), a)

    @PROPS
    @given(distinct_evidence_updates(n=3))
    def test_associative_for_distinct_sources(self, updates: list[list[dict]]) -> None:
        left, a, b = updates
        base = merge_evidence({}, left)
        grouped_right = merge_evidence(merge_evidence({}, a), b)
        assert merge_evidence(merge_evidence(base, a), b) == merge_evidence(base, grouped_right)

    @PROPS
    @given(st.lists(st.lists(versioned_item, max_size=6), min_size=1, max_size=5), st.randoms())
    def test_order_free_without_same_version_conflicts(self, updates, rnd) -> None:
        def fold(seq: list[list[dict]]) -> dict:
            merged: dict = {}
            for update in seq:
                merged = merge_evidence(merged, update)
            return merged

        shuffled = [rnd.sample(u, len(u)) for u in updates]
        rnd.shuffle(shuffled)
        expected: dict[str, dict] = {}
        for item in (i for u in updates for i in u):
            if item["version"] > expected.get(item["source_id"], {"version": 0})["version"]:
                expected[item["source_id"]] = item
        assert fold(updates) == fold(shuffled) == expected

    @PROPS
    @given(
        st.lists(any_item, max_size=6),
        st.lists(any_item, max_size=6),
        st.booleans(),
    )
    def test_replayed_update_is_idempotent(self, left_items, update_items, as_dict) -> None:
        left = merge_evidence({}, left_items)
        update = _as_update(update_items, as_dict)
        once = merge_evidence(left, update)
        assert merge_evidence(once, update) == once

    @PROPS
    @given(st.lists(any_item, max_size=6), st.lists(any_item, max_size=6), st.booleans())
    def test_never_mutates_inputs(self, left_items, update_items, as_dict) -> None:
        left = merge_evidence({}, left_items)
        update = _as_update(update_items, as_dict)
        before = copy.deepcopy((left, update))
        merge_evidence(left, update)
        assert (left, update) == before

    @PROPS
    @given(st.lists(any_item, max_size=8))
    def test_higher_version_always_survives(self, items) -> None:
        merged = merge_evidence({}, items)
        for source in {i["source_id"] for i in items}:
            top = max(i["version"] for i in items if i["source_id"] == source)
            assert merged[source]["version"] == top


@st.composite
def distinct_budget_updates(draw: st.DrawFn, n: int) -> list[dict[str, Any]]:
    """``n`` budget updates with non-empty, pairwise distinct charge ids (integer amounts).

    Integer amounts keep the sums exact, so a different order cannot round differently.
    """
    all_ids = draw(st.lists(ids, unique=True, min_size=n, max_size=n * 4))
    owners = list(range(n)) + draw(
        st.lists(st.integers(0, n - 1), min_size=len(all_ids) - n, max_size=len(all_ids) - n)
    )
    kinds = st.sampled_from(["model_calls", "tool_calls", "tokens_in", "tokens_out"])
    return [
        {
            "used": draw(st.dictionaries(kinds, small_ints, max_size=4)),
            "charges": [c for c, owner in zip(all_ids, owners, strict=True) if owner == i],
        }
        for i in range(n)
    ]


budget_update = st.builds(
    lambda used, charges: {"used": used, "charges": charges},
    st.dictionaries(st.sampled_from(["model_calls", "tool_calls"]), small_ints, max_size=2),
    st.lists(ids, min_size=1, max_size=4),
)


class TestBudgetProperties:
    @PROPS
    @given(distinct_budget_updates(2))
    def test_commutative_for_distinct_charges(self, updates) -> None:
        a, b = updates
        ab, ba = add_budget(add_budget({}, a), b), add_budget(add_budget({}, b), a)
        assert ab["used"] == ba["used"]
        # The replay window records arrival order; as a set it is the same.
        assert sorted(ab["charges"]) == sorted(ba["charges"])
        assert sum(ab["used"].values()) == sum(sum(u["used"].values()) for u in updates)

    @PROPS
    @given(distinct_budget_updates(3))
    def test_associative_for_distinct_charges(self, updates) -> None:
        left, a, b = updates
        assert add_budget(add_budget(left, a), b) == add_budget(left, add_budget(a, b))

    @PROPS
    @given(st.lists(budget_update, max_size=5), budget_update)
    def test_replayed_update_is_idempotent(self, history, update) -> None:
        total: dict[str, Any] = {}
        for earlier in history:
            total = add_budget(total, earlier)
        once = add_budget(total, update)
        assert add_budget(once, update) == once

    @PROPS
    @given(st.lists(budget_update, max_size=5), budget_update)
    def test_never_mutates_inputs(self, history, update) -> None:
        total: dict[str, Any] = {}
        for earlier in history:
            before = copy.deepcopy((total, earlier))
            nxt = add_budget(total, earlier)
            assert (total, earlier) == before
            total = nxt
        before = copy.deepcopy((total, update))
        add_budget(total, update)
        assert (total, update) == before

    @PROPS
    @given(distinct_budget_updates(4), st.randoms())
    def test_sum_of_distinct_charges_in_any_order(self, updates, rnd) -> None:
        expected: dict[str, int] = {}
        for u in updates:
            for kind, amount in u["used"].items():
                expected[kind] = expected.get(kind, 0) + amount
        order = rnd.sample(updates, len(updates))
        total: dict[str, Any] = {}
        for u in order + order:  # every update replayed once more: still counted once
            total = add_budget(total, u)
        assert total["used"] == expected


results_update = st.dictionaries(
    st.sampled_from(["c1", "c2", "c3", "c4"]),
    st.builds(result, st.just("x"), st.sampled_from(["succeeded", "failed", "unknown"])),
    max_size=4,
).map(lambda d: {k: {**v, "call_id": k} for k, v in d.items()})


class TestResultsProperties:
    @PROPS
    @given(results_update, results_update, results_update)
    def test_commutative_and_associative_for_distinct_calls(self, left, a, b) -> None:
        a = {k: v for k, v in a.items() if k not in left}
        b = {k: v for k, v in b.items() if k not in left and k not in a}
        assert merge_results(merge_results({}, a), b) == merge_results(merge_results({}, b), a)
        assert merge_results(merge_results(left, a), b) == merge_results(left, merge_results(a, b))

    @PROPS
    @given(results_update, results_update)
    def test_replay_is_idempotent_and_pure(self, left, update) -> None:
        before = copy.deepcopy((left, update))
        once = merge_results(left, update)
        assert merge_results(once, update) == once
        assert (left, update) == before
        assert set(once) == set(left) | set(update)


event_ids = st.lists(st.text(alphabet="abcdef:.0123", min_size=1, max_size=6), max_size=10)


class TestEventsProperties:
    @PROPS
    @given(
        st.lists(
            st.text(alphabet="abcdef:.0123", min_size=1, max_size=6),
            unique=True,
            max_size=3 * REPLAY_WINDOW,
        )
    )
    def test_commutative_and_associative_for_distinct_ids(self, all_ids) -> None:
        third = len(all_ids) // 3
        left_ids, a, b = all_ids[:third], all_ids[third : 2 * third], all_ids[2 * third :]
        left = dedupe_events(None, left_ids)
        ab = dedupe_events(dedupe_events(left, a), b)
        ba = dedupe_events(dedupe_events(left, b), a)
        assert ab["count"] == ba["count"] == len(all_ids)
        # The kept tail is the newest REPLAY_WINDOW ids, so it depends on order once more
        # ids than that arrived; within the window it is the same set either way.
        if len(all_ids) <= REPLAY_WINDOW:
            assert sorted(ab["recent"]) == sorted(ba["recent"])
        # Grouping the two updates first (a dict update, unwindowed) gives the same value.
        grouped = dedupe_events(dedupe_events(None, a, window=None), b, window=None)
        assert ab == dedupe_events(left, grouped)

    @PROPS
    @given(event_ids, event_ids, st.booleans())
    def test_replay_is_idempotent(self, earlier, update_ids, as_dict) -> None:
        left = dedupe_events(None, earlier)
        update: Any = {"recent": update_ids} if as_dict else update_ids
        once = dedupe_events(left, update)
        assert dedupe_events(once, update) == once
        assert once["count"] == len(set(earlier) | set(update_ids))

    @PROPS
    @given(event_ids, event_ids, st.booleans())
    def test_never_mutates_inputs(self, earlier, update_ids, as_dict) -> None:
        left = dedupe_events(None, earlier)
        update: Any = {"count": 99, "recent": update_ids} if as_dict else update_ids
        before = copy.deepcopy((left, update))
        dedupe_events(left, update)
        assert (left, update) == before


statuses = st.sampled_from([*TERMINAL, *NON_TERMINAL, None])


class TestStatusAndPlanProperties:
    @PROPS
    @given(st.lists(statuses, max_size=10))
    def test_the_first_terminal_status_is_final(self, updates) -> None:
        status = None
        for update in updates:
            status = sticky_status(status, update)
        first_terminal = next((u for u in updates if u in TERMINAL), None)
        if first_terminal is not None:
            assert status == first_terminal
        else:
            assert status == next((u for u in reversed(updates) if u is not None), None)

    @PROPS
    @given(st.lists(st.integers(0, 10), unique=True, min_size=1, max_size=6), st.randoms())
    def test_newest_plan_wins_in_any_order(self, versions, rnd) -> None:
        plans = [plan(v, f"step{v}") for v in versions]
        rnd.shuffle(plans)
        current = None
        for p in plans:
            before = copy.deepcopy(p)
            current = replace_plan_if_newer(current, p)
            assert p == before
        assert current == plan(max(versions), f"step{max(versions)}")


progress_update = st.builds(
    lambda turn, seen, facts, moved: {"turn": turn, "seen": seen, "facts": facts, "moved": moved},
    st.sampled_from("abcdef"),
    st.lists(st.sampled_from(["p1", "p2", "p3"]), max_size=2),
    st.lists(st.sampled_from(["f1", "f2"]), max_size=1),
    st.booleans(),
)
turn_record = st.builds(lambda i: {"id": f"t{i}", "turn": i}, st.integers(0, 30))


class TestBatchForms:
    """LangGraph's DeltaChannel may replay a channel's writes in bigger batches than they
    were written in: each batch form must give the same value however they are cut."""

    @PROPS
    @given(
        st.sampled_from(["results", "budget", "events", "history", "progress", "latest"]),
        st.data(),
        st.lists(st.integers(0, 40), max_size=3),
    )
    def test_batching_does_not_change_the_value(self, channel, data, cuts) -> None:
        batch, update = {
            "results": (results_batch, results_update),
            "budget": (
                budget_batch,
                st.builds(
                    lambda c, n: {"used": {"tool_calls": n}, "charges": [c]}, ids, small_ints
                ),
            ),
            "events": (events_batch, event_ids),
            "history": (history_batch, st.lists(turn_record, max_size=3)),
            "progress": (progress_batch, progress_update),
            "latest": (latest_batch, st.lists(turn_record, max_size=2)),
        }[channel]
        updates = data.draw(st.lists(update, max_size=12))
        whole = batch(None, updates)
        value = None
        for chunk in _split(updates, cuts):
            value = batch(value, chunk)
        assert value == whole

    @PROPS
    @given(st.lists(progress_update, max_size=10))
    def test_progress_batch_is_the_left_fold(self, updates) -> None:
        value = None
        for update in updates:
            value = fold_progress(value, update)
        assert progress_batch(None, updates) == (value if updates else None)
