"""Hybrid: fixed phases (scope → collect → analyze → publish → accept), ReAct inside collect.

Phases without tools the task may use are skipped (see :mod:`execgraph.nodes.hybrid`); a
reply calling only a later phase's tools moves the run there (``collect``/``analyze`` to
``approve`` for a publish), and a bare goal's answer goes to ``verify_finish``. Each
node's function has the node's name there; the phase nodes (collect, analyze, publish)
are :func:`~execgraph.nodes.hybrid.phases.phase_step` of their phase.
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
from execgraph.nodes.dispatch import dispatch, fan_out
from execgraph.nodes.hybrid.approval import approve
from execgraph.nodes.hybrid.phases import (
    PHASE_EXITS,
    PHASES,
    accept,
    phase_step,
    reopen,
    route_opened,
    route_phase,
    route_phase_decision,
    scope,
)
from execgraph.nodes.turn_progress import observe
from execgraph.nodes.verify import route_verify, verify
from execgraph.state.compiled import RunGraph

__all__ = ["build_hybrid"]


def build_hybrid(deps: RunDeps, **options: Unpack[CompileOptions]) -> RunGraph:
    """Compile the hybrid graph over ``deps``."""
    builder = run_builder(options)
    builder.add_node("admit", partial(admit, deps=deps))
    builder.add_node("scope", partial(scope, deps=deps))
    for phase in PHASES:
        builder.add_node(phase, partial(phase_step, deps=deps, phase=phase))
        decided = partial(route_phase_decision, deps=deps)
        builder.add_conditional_edges(phase, decided, PHASE_EXITS[phase])
    builder.add_node("approve", partial(approve, deps=deps))
    builder.add_node("dispatch", partial(dispatch, deps=deps))
    builder.add_node("executor", executor(deps.executor))
    builder.add_node("observe", observe)
    # The verifier twice: as the stop controller after each tool turn, and on the result
    # (the last phase's finish, or what the accept phase states after a publish).
    builder.add_node("check_stop", partial(verify, deps=deps))
    builder.add_node("accept", partial(accept, deps=deps))
    builder.add_node("verify_finish", partial(verify, deps=deps))
    builder.add_node("reopen", partial(reopen, deps=deps))
    builder.add_edge(START, "admit")
    builder.add_conditional_edges("admit", route_admitted, {"run": "scope", "end": END})
    opened: dict[Hashable, str] = {p: p for p in (*PHASES, "accept")}
    builder.add_conditional_edges("scope", route_opened, opened)
    builder.add_conditional_edges("dispatch", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_conditional_edges("approve", partial(fan_out, deps=deps), ["executor", "observe"])
    builder.add_edge("executor", "observe")
    builder.add_edge("observe", "check_stop")
    builder.add_conditional_edges(
        "check_stop",
        route_phase,
        {"collect": "collect", "analyze": "analyze", "accept": "accept", "end": END},
    )
    builder.add_edge("accept", "verify_finish")
    builder.add_conditional_edges("verify_finish", route_verify, {"continue": "reopen", "end": END})
    builder.add_conditional_edges("reopen", route_opened, opened)
    return compile_run(builder, options, "hybrid")
