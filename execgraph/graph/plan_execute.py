"""Plan-and-execute: plan → parallel waves of ready steps → answer → verify; replan on triggers.

Each node's function has the node's name in :mod:`execgraph.nodes.plan_execute`. A model
that does not plan still drives it (:mod:`execgraph.nodes.plan_execute.direct`): a plain
answer from the planner goes to ``verify_finish``, tool calls from ``respond`` run as the
next wave (``schedule``).
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import partial
from typing import Unpack

from langgraph.graph import END, START

from execgraph.graph.compiling import CompileOptions, compile_run, run_builder
from execgraph.graph.executor import executor
from execgraph.nodes.admission import admit, route_admitted
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import fan_out
from execgraph.nodes.plan_execute.answer import respond, route_respond
from execgraph.nodes.plan_execute.planner import plan, route_planned
from execgraph.nodes.plan_execute.replan import assess, rejected, route_assess
from execgraph.nodes.plan_execute.waves import schedule
from execgraph.nodes.turn_progress import observe
from execgraph.nodes.verify import route_verify, verify
from execgraph.state.compiled import RunGraph

__all__ = ["build_plan_execute"]


def build_plan_execute(deps: RunDeps, **options: Unpack[CompileOptions]) -> RunGraph:
    """Compile the plan-and-execute graph over ``deps``."""
    builder = run_builder(options)
    builder.add_node("admit", partial(admit, deps=deps))
    builder.add_node("plan", partial(plan, deps=deps))
    builder.add_node("schedule", partial(schedule, deps=deps))
    builder.add_node("executor", executor(deps.executor))
    builder.add_node("observe", observe)
    # The verifier twice: as the stop controller after each wave, and on the answer.
    builder.add_node("check_stop", partial(verify, deps=deps))
    builder.add_node("assess", partial(assess, deps=deps))
    builder.add_node("respond", partial(respond, deps=deps))
    builder.add_node("verify_finish", partial(verify, deps=deps))
    builder.add_node("rejected", partial(rejected, deps=deps))
    builder.add_edge(START, "admit")
    builder.add_conditional_edges("admit", route_admitted, {"run": "plan", "end": END})
    planned: dict[Hashable, str] = {
        "schedule": "schedule",
        "verify_finish": "verify_finish",
        "end": END,
    }
    builder.add_conditional_edges("plan", route_planned, planned)
    builder.add_conditional_edges("schedule", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_edge("executor", "observe")
    builder.add_edge("observe", "check_stop")
    builder.add_conditional_edges("check_stop", route_verify, {"continue": "assess", "end": END})
    after_assess: dict[Hashable, str] = {
        "schedule": "schedule",
        "plan": "plan",
        "respond": "respond",
        "end": END,
    }
    builder.add_conditional_edges("assess", route_assess, after_assess)
    builder.add_conditional_edges(
        "respond", route_respond, ["rejected", "verify_finish", "schedule"]
    )
    builder.add_conditional_edges(
        "verify_finish", route_verify, {"continue": "rejected", "end": END}
    )
    builder.add_conditional_edges("rejected", route_assess, after_assess)
    return compile_run(builder, options, "plan_execute")
