"""Unit tests for the control reducers of :mod:`execgraph.state.reducers`: the run's status, which
stays terminal once it ends, and the plan, which only a newer version replaces.

Like the merge reducers (``test_reducers.py``) they run when parallel tasks write the same
channel in one superstep and again when a node is replayed, so a replayed update must
change nothing and inputs must never be mutated.
"""

from __future__ import annotations

import copy

import pytest

from execgraph.state.contracts import RunStatus
from execgraph.state.reducers import replace_plan_if_newer, sticky_status
from tests.state.reducer_helpers import NON_TERMINAL, TERMINAL, plan

# =========================================================================== sticky_status


class TestStickyStatus:
    @pytest.mark.parametrize("terminal", TERMINAL)
    @pytest.mark.parametrize("update", [*TERMINAL, *NON_TERMINAL, None])
    def test_terminal_status_never_changes(self, terminal: str, update: str | None) -> None:
        assert sticky_status(terminal, update) == terminal

    @pytest.mark.parametrize("current", [*NON_TERMINAL, None])
    @pytest.mark.parametrize("update", [*TERMINAL, *NON_TERMINAL])
    def test_non_terminal_takes_the_update(self, current: str | None, update: str) -> None:
        assert sticky_status(current, update) == update

    @pytest.mark.parametrize("current", [*NON_TERMINAL, *TERMINAL, None])
    def test_none_update_keeps_current(self, current: str | None) -> None:
        assert sticky_status(current, None) == current

    def test_running_waiting_running(self) -> None:
        status = None
        for update in ["RUNNING", "WAITING", "RUNNING", "WAITING", "RUNNING"]:
            status = sticky_status(status, update)
            assert status == update

    def test_run_ends_once(self) -> None:
        status = None
        for update in ["RUNNING", "WAITING", "COMPLETED", "RUNNING", "FAILED", "WAITING"]:
            status = sticky_status(status, update)
        assert status == "COMPLETED"

    @pytest.mark.parametrize("status", list(RunStatus))
    def test_agrees_with_run_status_terminal(self, status: RunStatus) -> None:
        # The reducer's terminal set and RunStatus.terminal must be one definition.
        for value in (status, status.value):
            after = sticky_status(value, "RUNNING" if status != "RUNNING" else "WAITING")
            assert (after == status) is status.terminal

    def test_enum_values_are_sticky_too(self) -> None:
        assert sticky_status(RunStatus.COMPLETED, RunStatus.RUNNING) == "COMPLETED"


# =========================================================================== replace_plan


class TestReplacePlanIfNewer:
    def test_none_and_none_is_none(self) -> None:
        assert replace_plan_if_newer(None, None) is None

    def test_first_plan_is_taken(self) -> None:
        assert replace_plan_if_newer(None, plan(1, "a")) == plan(1, "a")

    def test_none_update_keeps_current(self) -> None:
        assert replace_plan_if_newer(plan(2, "a"), None) == plan(2, "a")

    def test_newer_version_replaces(self) -> None:
        assert replace_plan_if_newer(plan(1, "a"), plan(2, "b")) == plan(2, "b")

    @pytest.mark.parametrize("version", [0, 1, 2])
    def test_same_or_older_version_is_ignored(self, version: int) -> None:
        assert replace_plan_if_newer(plan(2, "a"), plan(version, "b")) == plan(2, "a")

    def test_missing_version_counts_as_zero(self) -> None:
        assert replace_plan_if_newer(plan(None, "a"), plan(1, "b")) == plan(1, "b")
        assert replace_plan_if_newer(plan(1, "a"), plan(None, "b")) == plan(1, "a")
        assert replace_plan_if_newer(plan(None, "a"), plan(None, "b")) == plan(None, "a")

    def test_replayed_plan_is_idempotent(self) -> None:
        newer = plan(3, "x")
        once = replace_plan_if_newer(plan(1, "a"), newer)
        assert replace_plan_if_newer(once, newer) == once

    def test_returns_a_copy_and_does_not_mutate(self) -> None:
        left, right = plan(1, "a"), plan(2, "b")
        before = copy.deepcopy((left, right))
        out = replace_plan_if_newer(left, right)
        assert out is not right
        assert (left, right) == before


# =========================================================================== properties
