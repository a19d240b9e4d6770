"""A bare goal's checks are the run's own actions: each tool called succeeded once, reads
aside."""

from __future__ import annotations

from typing import Any

from execgraph.nodes.run_actions import WHY_CHARS, met_actions, tool_outcomes, unmet_actions
from execgraph.state.reducers import fold_progress


def _result(tool: str, outcome: str, status: str = "OK", message: str = "") -> dict[str, Any]:
    error = {"type": "X", "message": message} if message else None
    return {"tool_name": tool, "outcome": outcome, "status": status, "error": error}


def test_a_success_sticks_and_a_failure_says_why() -> None:
    results = {
        "c1": _result("send", "failed", "DENIED", "rejected by a person"),
        "c2": _result("look", "failed", "NOT_FOUND", "no such page"),
        "c3": _result("look", "succeeded"),
        "c4": _result("look", "failed", "NOT_FOUND", "gone"),
    }
    tools = tool_outcomes(["c1", "c2", "c3", "c4", "unknown"], results)
    assert tools == {
        "send": {"ok": False, "why": "DENIED: rejected by a person"},
        "look": {"ok": True},
    }
    long = tool_outcomes(["c"], {"c": _result("t", "failed", "DENIED", "x" * 999)})
    assert len(long["t"]["why"]) == WHY_CHARS


def test_unmet_actions_leave_the_reads_out_and_the_progress_fold_keeps_a_success() -> None:
    progress = fold_progress(None, {"turn": "a", "tools": {"send": {"ok": False, "why": "no"}}})
    progress = fold_progress(progress, {"turn": "b", "tools": {"look": {"ok": False, "why": "x"}}})
    state = {"progress": progress}
    assert unmet_actions(state) == ["send never succeeded (no)", "look never succeeded (x)"]
    assert unmet_actions(state, reads={"look"}) == ["send never succeeded (no)"]
    progress = fold_progress(progress, {"turn": "c", "tools": {"send": {"ok": True}}})
    progress = fold_progress(progress, {"turn": "d", "tools": {"send": {"ok": False, "why": "z"}}})
    assert met_actions({"progress": progress}) == ["send succeeded"]
    assert progress["stale"] == 0  # records without ``moved`` judge no turn
    assert met_actions({}) == [] and unmet_actions({}) == []
