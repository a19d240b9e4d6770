"""Fixed workflow: stage 1 → … → stage n → conclude → verify, each stage through the executor.

A stage's reply that answers without tools, in a task without success checks, is the
run's answer: it goes to the verifier (``verify_finish``) at once.

Each node's function has the node's name in :mod:`execgraph.nodes.workflow`; a stage's
node (``stage_<name>``) is :func:`~execgraph.nodes.workflow.stage_step` of that stage.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import partial
from typing import Unpack

from langgraph.graph import END, START

from execgraph.graph.compiling import CompileOptions, compile_run, run_builder
from execgraph.graph.executor import executor
from execgraph.nodes.admission import admit, route_admitted
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import dispatch, fan_out
from execgraph.nodes.turn_progress import observe
from execgraph.nodes.verify import verify
from execgraph.nodes.workflow import (
    Stage,
    advance,
    conclude,
    finalize,
    route_after_stage,
    route_stage,
    stage_step,
    workflow_stages,
)
from execgraph.state.compiled import RunGraph

__all__ = ["Stage", "build_workflow"]


def build_workflow(
    deps: RunDeps, *, stages: Iterable[Stage] | None = None, **options: Unpack[CompileOptions]
) -> RunGraph:
    """Compile a fixed workflow over ``stages`` (default: one stage per tool, in the order
    the tools were given)."""
    steps = workflow_stages(deps, stages)
    names = [f"stage_{s.name}" for s in steps]
    builder = run_builder(options)
    builder.add_node("admit", partial(admit, deps=deps))
    for node, stage in zip(names, steps, strict=True):
        builder.add_node(node, partial(stage_step, deps=deps, stage=stage))
        exits = ["dispatch", "advance", "verify_finish"]
        builder.add_conditional_edges(node, partial(route_after_stage, deps=deps), exits)
    builder.add_node("dispatch", partial(dispatch, deps=deps))
    builder.add_node("executor", executor(deps.executor))
    builder.add_node("observe", observe)
    # The verifier twice: as the stop controller after each observation, and on the answer.
    builder.add_node("check_stop", partial(verify, deps=deps))
    builder.add_node("advance", advance)
    builder.add_node("conclude", partial(conclude, deps=deps))
    builder.add_node("verify_finish", partial(verify, deps=deps))
    builder.add_node("finalize", partial(finalize, deps=deps))
    builder.add_edge(START, "admit")
    first = names[0] if names else "conclude"
    builder.add_conditional_edges("admit", route_admitted, {"run": first, "end": END})
    builder.add_conditional_edges("dispatch", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_edge("executor", "observe")
    builder.add_edge("observe", "check_stop")
    builder.add_edge("check_stop", "advance")
    targets: dict[Hashable, str] = {**{n: n for n in names}, "conclude": "conclude", "end": END}
    builder.add_conditional_edges("advance", partial(route_stage, names=names), targets)
    builder.add_edge("conclude", "verify_finish")
    builder.add_edge("verify_finish", "finalize")
    builder.add_edge("finalize", END)
    return compile_run(builder, options, "workflow")
