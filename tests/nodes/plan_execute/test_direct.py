"""A model that does not plan: its direct calls become the plan's next wave."""

from __future__ import annotations

from execgraph.nodes.plan_execute.direct import DIRECT, direct_steps, extended_plan
from execgraph.state.contracts import Decision, DecisionKind


def _call(i: int, tool: str) -> Decision:
    return Decision(
        decision_id=f"t3.d{i}",
        kind=DecisionKind.TOOL_CALL,
        tool_name=tool,
        arguments={"i": i},
        call_id=f"t3.c{i}",
        tool_call_id=f"call_{i}",
    )


def test_each_call_is_a_step_without_dependencies_answering_the_models_call() -> None:
    finish = Decision(decision_id="x", kind=DecisionKind.FINISH, content="-")
    assert direct_steps([_call(0, "look"), finish, _call(1, "send")], 2) == [
        {
            "id": "v2.0",
            "tool": "look",
            "arguments": {"i": 0},
            "depends_on": [],
            "success": None,
            "call_id": "p2.v2.0",
            "tool_call_id": "call_0",
        },
        {
            "id": "v2.1",
            "tool": "send",
            "arguments": {"i": 1},
            "depends_on": [],
            "success": None,
            "call_id": "p2.v2.1",
            "tool_call_id": "call_1",
        },
    ]


def test_the_next_version_keeps_every_step_and_counts_no_replan() -> None:
    old = {"version": 1, "steps": [{"id": "s1"}], "replans": 0, "answered": ["k"]}
    state = {"plan": old, "budget": {"used": {"tool_calls": 3}}}
    plan = extended_plan(state, [_call(0, "send")])
    assert plan["version"] == 2 and [s["id"] for s in plan["steps"]] == ["s1", "v2.0"]
    assert plan["replans"] == 0 and plan["why"] == DIRECT and plan["answered"] == ["k"]
    assert plan["planned_tool_calls"] == 1 and plan["tool_calls_before"] == 3
    assert extended_plan({}, [_call(0, "look")])["version"] == 1
