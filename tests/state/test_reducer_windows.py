"""Unit tests for the bounded side of :mod:`execgraph.state.reducers`: windows and the loop guard.

State stays O(1) in run length because every reducer keeps only the newest items (the
execution store keeps everything); ``fold_progress`` folds one turn's loop-guard update.
"""

from __future__ import annotations

import copy
from typing import Any

from execgraph.state.reducers import (
    EVIDENCE_WINDOW,
    PROGRESS_MEMORY,
    RESULTS_WINDOW,
    fold_progress,
    merge_evidence,
    merge_results,
)
from tests.state.reducer_helpers import ev, result


class TestWindows:
    def test_results_keep_the_newest_calls(self) -> None:
        merged: dict[str, Any] = {}
        for i in range(RESULTS_WINDOW + 5):
            merged = merge_results(merged, {f"c{i}": result(f"c{i}")})
        assert list(merged) == [f"c{i}" for i in range(5, RESULTS_WINDOW + 5)]

    def test_a_later_result_for_a_kept_call_does_not_evict_it(self) -> None:
        merged = {f"c{i}": result(f"c{i}") for i in range(RESULTS_WINDOW)}
        merged = merge_results(merged, {"c0": result("c0", "succeeded", reconciled=True)})
        assert len(merged) == RESULTS_WINDOW and merged["c0"]["reconciled"] is True

    def test_results_without_a_window_keep_everything(self) -> None:
        many = {f"c{i}": result(f"c{i}") for i in range(RESULTS_WINDOW * 2)}
        assert merge_results({}, many, window=None) == many

    def test_evidence_keeps_the_newest_sources(self) -> None:
        items = [ev(f"s{i}") for i in range(EVIDENCE_WINDOW + 3)]
        merged = merge_evidence({}, items)
        assert list(merged) == [f"s{i}" for i in range(3, EVIDENCE_WINDOW + 3)]
        assert len(merge_evidence({}, items, window=None)) == EVIDENCE_WINDOW + 3


class TestFoldProgress:
    def test_first_turn_that_moves_resets_stale(self) -> None:
        value = fold_progress(None, {"turn": "a", "seen": ["p1"], "facts": [], "moved": True})
        assert value == {"turn": "a", "seen": ["p1"], "facts": [], "stale": 0}

    def test_turns_without_anything_new_count_up(self) -> None:
        value = fold_progress(None, {"turn": "a", "seen": ["p1"], "moved": True})
        value = fold_progress(value, {"turn": "b", "seen": [], "moved": False})
        value = fold_progress(value, {"turn": "c", "seen": [], "moved": False})
        assert value["stale"] == 2
        value = fold_progress(value, {"turn": "d", "facts": ["f1"], "moved": True})
        assert value["stale"] == 0 and value["facts"] == ["f1"]

    def test_a_replayed_turn_counts_once(self) -> None:
        update = {"turn": "b", "seen": [], "moved": False}
        once = fold_progress({"turn": "a", "seen": ["p1"], "facts": [], "stale": 0}, update)
        assert fold_progress(once, update) == once

    def test_memory_is_bounded_and_keeps_the_newest(self) -> None:
        value: dict[str, Any] | None = None
        for i in range(PROGRESS_MEMORY + 10):
            value = fold_progress(value, {"turn": str(i), "seen": [f"p{i}"], "moved": True})
        assert value is not None and len(value["seen"]) == PROGRESS_MEMORY
        assert value["seen"][-1] == f"p{PROGRESS_MEMORY + 9}"

    def test_a_record_without_moved_keeps_stale_and_a_tool_success_sticks(self) -> None:
        value = fold_progress(None, {"turn": "a", "seen": [], "moved": False})
        value = fold_progress(value, {"turn": "b", "tools": {"t": {"ok": True}}})
        value = fold_progress(value, {"turn": "c", "tools": {"t": {"ok": False, "why": "x"}}})
        assert value["stale"] == 1 and value["tools"] == {"t": {"ok": True}}

    def test_does_not_mutate_inputs(self) -> None:
        left = {"turn": "a", "seen": ["p1"], "facts": ["f1"], "stale": 1}
        update = {"turn": "b", "seen": ["p2"], "facts": [], "moved": True}
        before = copy.deepcopy((left, update))
        fold_progress(left, update)
        assert (left, update) == before
