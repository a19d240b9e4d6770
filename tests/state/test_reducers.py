"""Unit tests for the named reducers of :mod:`execgraph.state.reducers`.

The reducers are what LangGraph calls when parallel branches (one executor call per
``Send``) write the same channel in one superstep, and again when a node is replayed after
an interrupt or a crash. So besides the per-field semantics of DESIGN.md section 6, three
properties matter: order does not matter for distinct keys (commutative, associative), a
replayed update counts once (idempotent), and inputs are never mutated (LangGraph keeps the
previous checkpoint's values and the writes of other tasks around). The properties
themselves are in ``test_reducer_properties.py``; the status and plan reducers in
``test_control_reducers.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import settings

from execgraph.state.reducers import (
    REPLAY_WINDOW,
    add_budget,
    dedupe_events,
    merge_evidence,
    merge_results,
)
from tests.state.reducer_helpers import charge, ev, result

PROPS = settings(max_examples=75, deadline=None)

# =========================================================================== merge_evidence


class TestMergeEvidence:
    def test_none_and_none_is_empty(self) -> None:
        assert merge_evidence(None, None) == {}

    def test_none_update_keeps_left(self) -> None:
        left = {"a": ev("a")}
        assert merge_evidence(left, None) == left

    def test_list_update_is_keyed_by_source_id(self) -> None:
        merged = merge_evidence({}, [ev("a", "1"), ev("b", "2")])
        assert merged == {"a": ev("a", "1"), "b": ev("b", "2")}

    def test_dict_update_uses_its_values_source_id(self) -> None:
        # The key of a dict update is not trusted; the item's own source_id is.
        merged = merge_evidence({"a": ev("a", "1")}, {"whatever": ev("b", "2")})
        assert set(merged) == {"a", "b"}
        assert merged["b"] == ev("b", "2")

    def test_list_and_dict_updates_agree(self) -> None:
        items = [ev("a", "1"), ev("b", "2", version=3)]
        as_dict = {item["source_id"]: item for item in items}
        assert merge_evidence({}, items) == merge_evidence({}, as_dict)

    def test_empty_update_keeps_left(self) -> None:
        left = {"a": ev("a")}
        assert merge_evidence(left, []) == left
        assert merge_evidence(left, {}) == left

    def test_generator_update_is_accepted(self) -> None:
        merged = merge_evidence(None, (ev(s) for s in ("a", "b")))
        assert set(merged) == {"a", "b"}

    @pytest.mark.parametrize("order", ["old_first", "new_first"])
    def test_higher_version_wins_regardless_of_arrival_order(self, order: str) -> None:
        old, new = ev("a", "old", version=1), ev("a", "new", version=2)
        updates = [[old], [new]] if order == "old_first" else [[new], [old]]
        merged: dict = {}
        for update in updates:
            merged = merge_evidence(merged, update)
        assert merged == {"a": new}
        assert "conflict" not in merged["a"]

    def test_higher_version_within_one_update_wins(self) -> None:
        merged = merge_evidence({}, [ev("a", "new", version=5), ev("a", "old", version=2)])
        assert merged["a"]["value"] == "new"
        assert merged["a"]["version"] == 5

    def test_missing_version_counts_as_one(self) -> None:
        merged = merge_evidence({"a": ev("a", "first", version=None)}, [ev("a", "v2", version=2)])
        assert merged["a"]["value"] == "v2"
        # version 1 (explicit) against a missing version is the same version: a conflict.
        merged = merge_evidence({"a": ev("a", "x", version=None)}, [ev("a", "y", version=1)])
        assert merged["a"]["value"] == "x"
        assert merged["a"]["conflict"] is True

    def test_same_version_same_value_is_not_a_conflict(self) -> None:
        left = {"a": ev("a", "same")}
        merged = merge_evidence(left, [ev("a", "same")])
        assert merged == left
        assert "conflict" not in merged["a"]

    def test_same_version_other_value_keeps_first_and_flags_conflict(self) -> None:
        merged = merge_evidence({"a": ev("a", "first")}, [ev("a", "second")])
        assert merged["a"]["value"] == "first"
        assert merged["a"]["conflict"] is True
        assert merged["a"]["conflicts"] == ["second"]
        assert merged["a"]["source_id"] == "a"
        assert merged["a"]["version"] == 1

    def test_conflict_within_one_update_keeps_the_first_item(self) -> None:
        merged = merge_evidence({}, [ev("a", "first"), ev("a", "second")])
        assert merged["a"]["value"] == "first"
        assert merged["a"]["conflicts"] == ["second"]

    def test_every_conflicting_value_is_kept_once_and_sorted(self) -> None:
        merged: dict = {"a": ev("a", "m")}
        for value in ["z", "b", "z", "m", "b"]:
            merged = merge_evidence(merged, [ev("a", value)])
        assert merged["a"]["value"] == "m"
        assert merged["a"]["conflicts"] == ["b", "z"]
        assert merged["a"]["conflict"] is True

    def test_replayed_conflicting_update_does_not_duplicate(self) -> None:
        update = [ev("a", "second")]
        once = merge_evidence({"a": ev("a", "first")}, update)
        twice = merge_evidence(once, update)
        assert twice == once

    def test_newer_version_supersedes_a_conflict(self) -> None:
        conflicted = merge_evidence({"a": ev("a", "x")}, [ev("a", "y")])
        assert conflicted["a"]["conflict"] is True
        merged = merge_evidence(conflicted, [ev("a", "settled", version=2)])
        assert merged == {"a": ev("a", "settled", version=2)}

    def test_older_version_never_raises_a_conflict(self) -> None:
        left = {"a": ev("a", "new", version=3)}
        assert merge_evidence(left, [ev("a", "other", version=2)]) == left

    def test_other_keys_are_untouched(self) -> None:
        left = {"a": ev("a", "1"), "b": ev("b", "2")}
        merged = merge_evidence(left, [ev("b", "3", version=2)])
        assert merged["a"] == left["a"]
        assert merged["b"]["value"] == "3"

    def test_does_not_mutate_inputs(self) -> None:
        left = {"a": ev("a", "x")}
        update = [ev("a", "y"), ev("b", "z", version=2)]
        left_before, update_before = copy.deepcopy(left), copy.deepcopy(update)
        merged = merge_evidence(left, update)
        assert left == left_before
        assert update == update_before
        # Nor is the stored item the caller's object: mutating the result is harmless.
        merged["b"]["value"] = "changed"
        assert update[1]["value"] == "z"

    @pytest.mark.parametrize(
        ("parent_value", "subgraph_values", "expected_conflicts"),
        [
            ("A", ["A", "B"], ["B"]),
            ("A", ["B", "C"], ["B", "C"]),
        ],
    )
    def test_conflicts_carried_by_an_update_are_kept(
        self, parent_value: str, subgraph_values: list[str], expected_conflicts: list[str]
    ) -> None:
        parent = {"a": ev("a", parent_value)}
        # The subgraph saw two values for the same source and version: it flagged a conflict.
        from_subgraph = merge_evidence({}, [ev("a", v) for v in subgraph_values])
        assert from_subgraph["a"]["conflict"] is True
        merged = merge_evidence(parent, from_subgraph)
        assert merged["a"]["value"] == parent_value
        assert merged["a"].get("conflict") is True
        assert merged["a"].get("conflicts") == expected_conflicts
        # Equivalently: grouping the updates must not change the result.
        one_by_one = merge_evidence(parent, [ev("a", v) for v in subgraph_values])
        assert merged == one_by_one


# =========================================================================== add_budget


class TestAddBudget:
    def test_none_and_none_is_zero(self) -> None:
        assert add_budget(None, None) == {"used": {}, "charges": []}

    def test_empty_update_keeps_left(self) -> None:
        left = charge(["c1"], tool_calls=1)
        assert add_budget(left, None) == left
        assert add_budget(left, {}) == left

    def test_adds_per_kind(self) -> None:
        total = add_budget(charge(["c1"], tool_calls=1, tokens_in=10), None)
        total = add_budget(total, charge(["c2"], tool_calls=1, tokens_out=5))
        total = add_budget(total, charge(["c3"], model_calls=1, tokens_in=7, cost_usd=0.25))
        assert total["used"] == {
            "tool_calls": 2,
            "tokens_in": 17,
            "tokens_out": 5,
            "model_calls": 1,
            "cost_usd": 0.25,
        }
        assert total["charges"] == ["c1", "c2", "c3"]

    def test_first_update_on_empty_channel(self) -> None:
        # LangGraph starts a dict channel at {} and feeds every update through the reducer.
        assert add_budget({}, charge(["c1"], model_calls=1)) == charge(["c1"], model_calls=1)

    def test_replayed_update_is_ignored(self) -> None:
        update = charge(["c1", "c2"], tool_calls=2, wall_time_s=1.5)
        once = add_budget(None, update)
        assert add_budget(once, update) == once
        assert add_budget(add_budget(once, update), update) == once

    def test_replay_of_an_older_update_is_ignored(self) -> None:
        first = charge(["c1"], tool_calls=1)
        total = add_budget(add_budget(None, first), charge(["c2"], tool_calls=1))
        assert add_budget(total, first) == total

    def test_update_whose_ids_are_a_subset_of_seen_is_a_replay(self) -> None:
        total = add_budget(None, charge(["c1", "c2", "c3"], tool_calls=3))
        assert add_budget(total, charge(["c3", "c1"], tool_calls=2)) == total

    def test_update_with_a_new_charge_id_is_counted(self) -> None:
        total = add_budget(None, charge(["c1"], tool_calls=1))
        total = add_budget(total, charge(["c1", "c2"], tool_calls=1))
        assert total["used"] == {"tool_calls": 2}
        assert total["charges"] == ["c1", "c2"]

    def test_update_without_charge_ids_cannot_be_recognised_as_a_replay(self) -> None:
        # No id, no deduplication: callers must give every charge an id to be replay-safe.
        update = {"used": {"tool_calls": 1}}
        total = add_budget(add_budget(None, update), update)
        assert total == {"used": {"tool_calls": 2}, "charges": []}

    def test_window_is_bounded_and_keeps_the_newest(self) -> None:
        total: dict[str, Any] = {}
        n = REPLAY_WINDOW + 40
        for i in range(n):
            total = add_budget(total, charge([f"c{i}"], tool_calls=1))
        assert total["used"] == {"tool_calls": n}
        assert len(total["charges"]) == REPLAY_WINDOW
        assert total["charges"] == [f"c{i}" for i in range(n - REPLAY_WINDOW, n)]
        # Every charge still inside the window is recognised as a replay.
        for i in (n - REPLAY_WINDOW, n - 1):
            assert add_budget(total, charge([f"c{i}"], tool_calls=1)) == total

    def test_one_update_with_many_charges_is_trimmed_to_the_window(self) -> None:
        ids = [f"c{i}" for i in range(REPLAY_WINDOW + 5)]
        total = add_budget(None, charge(ids, tool_calls=len(ids)))
        assert total["charges"] == ids[-REPLAY_WINDOW:]
        assert total["used"] == {"tool_calls": len(ids)}

    def test_does_not_mutate_inputs(self) -> None:
        left = charge(["c1"], tool_calls=1)
        update = charge(["c2"], tool_calls=1, tokens_in=3)
        left_before, update_before = copy.deepcopy(left), copy.deepcopy(update)
        add_budget(left, update)
        add_budget(left, left)
        assert left == left_before
        assert update == update_before


# =========================================================================== merge_results


class TestMergeResults:
    def test_none_and_none_is_empty(self) -> None:
        assert merge_results(None, None) == {}

    def test_merges_by_call_id(self) -> None:
        merged = merge_results({"c1": result("c1")}, {"c2": result("c2")})
        assert merged == {"c1": result("c1"), "c2": result("c2")}

    def test_later_result_for_a_call_wins(self) -> None:
        # A reconciliation replaces an `unknown` outcome for the same call.
        left = {"c1": result("c1", "unknown")}
        merged = merge_results(left, {"c1": result("c1", "succeeded", reconciled=True)})
        assert merged == {"c1": result("c1", "succeeded", reconciled=True)}

    def test_none_update_keeps_left(self) -> None:
        left = {"c1": result("c1")}
        assert merge_results(left, None) == left
        assert merge_results(None, left) == left

    def test_replayed_update_is_idempotent(self) -> None:
        update = {"c1": result("c1"), "c2": result("c2", "failed")}
        once = merge_results({"c0": result("c0")}, update)
        assert merge_results(once, update) == once

    def test_does_not_mutate_inputs(self) -> None:
        left, update = {"c1": result("c1")}, {"c1": result("c1", "failed")}
        before = copy.deepcopy((left, update))
        merge_results(left, update)
        assert (left, update) == before


# =========================================================================== dedupe_events


class TestDedupeEvents:
    def test_none_and_none_is_zero(self) -> None:
        assert dedupe_events(None, None) == {"count": 0, "recent": []}

    def test_none_update_keeps_left(self) -> None:
        left = {"count": 2, "recent": ["e1", "e2"]}
        assert dedupe_events(left, None) == left

    def test_list_update_counts_new_ids(self) -> None:
        assert dedupe_events(None, ["e1", "e2"]) == {"count": 2, "recent": ["e1", "e2"]}

    def test_dict_update_counts_new_ids(self) -> None:
        left = {"count": 1, "recent": ["e1"]}
        merged = dedupe_events(left, {"recent": ["e1", "e2", "e3"]})
        assert merged == {"count": 3, "recent": ["e1", "e2", "e3"]}

    def test_dict_update_count_is_not_trusted(self) -> None:
        # Only ids count: a replayed channel value must not add its own count again.
        left = {"count": 2, "recent": ["e1", "e2"]}
        assert dedupe_events(left, {"count": 2, "recent": ["e1", "e2"]}) == left

    def test_list_and_dict_updates_agree(self) -> None:
        left = {"count": 1, "recent": ["e0"]}
        ids = ["e1", "e0", "e2"]
        assert dedupe_events(left, ids) == dedupe_events(left, {"recent": ids})

    def test_tuple_and_generator_updates(self) -> None:
        assert dedupe_events(None, ("e1", "e2"))["count"] == 2
        assert dedupe_events(None, (f"e{i}" for i in range(3)))["count"] == 3

    def test_duplicate_ids_in_one_update_count_once(self) -> None:
        assert dedupe_events(None, ["e1", "e1", "e2", "e1"]) == {
            "count": 2,
            "recent": ["e1", "e2"],
        }

    def test_replayed_update_never_double_counts(self) -> None:
        update = ["e1", "e2"]
        once = dedupe_events({"count": 5, "recent": ["x"]}, update)
        assert once["count"] == 7
        assert dedupe_events(once, update) == once
        assert dedupe_events(once, {"recent": update}) == once

    def test_empty_update_keeps_left(self) -> None:
        left = {"count": 1, "recent": ["e1"]}
        assert dedupe_events(left, []) == left
        assert dedupe_events(left, {}) == left

    def test_recent_tail_is_bounded_but_count_is_not(self) -> None:
        merged: dict[str, Any] = {}
        n = REPLAY_WINDOW * 2 + 3
        for i in range(n):
            merged = dedupe_events(merged, [f"e{i}"])
        assert merged["count"] == n
        assert merged["recent"] == [f"e{i}" for i in range(n - REPLAY_WINDOW, n)]
        # A replay of any id inside the tail still counts zero.
        assert dedupe_events(merged, [f"e{n - REPLAY_WINDOW}", f"e{n - 1}"]) == merged

    def test_does_not_mutate_inputs(self) -> None:
        left = {"count": 1, "recent": ["e1"]}
        update = {"recent": ["e2"]}
        before = copy.deepcopy((left, update))
        dedupe_events(left, update)
        assert (left, update) == before
