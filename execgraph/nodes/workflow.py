"""Fixed workflows: the path is fixed, the model only fills in each stage's content.

A :class:`Stage` names the tools its step may use and what the step is for. The graph
(:mod:`execgraph.graph.workflow`) walks the stages in order (``cursor``); the model never
picks the next node. Each node's function has the node's name here; a stage's node
(``stage_<name>``) is :func:`stage_step` of that stage. After the last stage the model
states the result (``conclude``), the verifier judges it, and a workflow that ends short
of its checks ends PARTIAL (some checks hold) or FAILED (``finalize``) — it does not loop
back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from execgraph.nodes.asked_approval import REQUEST_APPROVAL
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.dispatch import ACTIONS
from execgraph.nodes.toolset import declaration_order
from execgraph.nodes.verify import evaluate, is_terminal, stop_update
from execgraph.state.contracts import DecisionKind, RunStatus, TaskContract
from execgraph.state.schema import RunState

__all__ = [
    "CONCLUDE_INSTRUCTION",
    "Stage",
    "advance",
    "conclude",
    "default_stages",
    "finalize",
    "route_after_stage",
    "route_stage",
    "stage_step",
    "workflow_stages",
]

CONCLUDE_INSTRUCTION = "Report the result of the workflow as the final output."


@dataclass(frozen=True)
class Stage:
    """One fixed step: a name, the tools it may call, and its instruction to the model."""

    name: str
    tools: tuple[str, ...]
    instruction: str


def default_stages(tool_names: list[str]) -> list[Stage]:
    """Without explicit stages: one stage per tool, in the order given (``build_graph``
    keeps the order its ``tools`` came in, so a write given before a publish runs first)."""
    return [
        Stage(name=n, tools=(n,), instruction=f"Use {n} for this step of the task.")
        for n in tool_names
    ]


def workflow_stages(deps: RunDeps, stages: Iterable[Stage] | None) -> list[Stage]:
    """The stages given, or without any :func:`default_stages` over the declared tools."""
    return list(stages) if stages else default_stages(declaration_order(deps.executor.registry))


def stage_step(
    state: RunState, config: RunnableConfig, *, deps: RunDeps, stage: Stage
) -> dict[str, Any]:
    """One model call for ``stage``: offered only the stage's tools (and to ask a person
    about a call of them first), no control tool that leaves the stage."""
    return decide(
        state,
        config,
        deps=deps,
        tools=stage.tools,
        controls=(REQUEST_APPROVAL,),
        instruction=stage.instruction,
        final=False,  # a stage's text is no structured answer: conclude asks for that
    )


def conclude(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """After the last stage: one model call, offered only finish, to state the result."""
    return decide(
        state, config, deps=deps, tools=(), controls=("finish",), instruction=CONCLUDE_INSTRUCTION
    )


def advance(state: RunState) -> dict[str, Any]:
    """Move to the next stage."""
    return {"cursor": int(state.get("cursor", 0)) + 1, "decisions": []}


def route_after_stage(state: Mapping[str, Any], *, deps: RunDeps) -> str:
    """A stage's tool calls go to the executor; a stage without any moves straight on,
    unless its reply is a bare goal's answer (no success checks), which the verifier
    judges at once (``verify_finish``). Where the graph asks for a structured answer,
    only ``conclude``'s finish gives it: a stage's text moves on."""
    kinds = {d["kind"] for d in state.get("decisions") or []}
    if kinds & set(ACTIONS):
        return "dispatch"
    bare = not (state.get("contract") or {}).get("success_checks")
    answered = bare and DecisionKind.ANSWER.value in kinds and deps.answer_format is None
    return "verify_finish" if answered else "advance"


def route_stage(state: Mapping[str, Any], names: list[str]) -> str:
    """The node of the current stage, ``conclude`` after the last, END once terminal."""
    if is_terminal(state):
        return "end"
    cursor = int(state.get("cursor", 0))
    return names[cursor] if cursor < len(names) else "conclude"


def finalize(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> dict[str, Any]:
    """End a workflow the verifier did not accept: PARTIAL if some checks hold, else FAILED."""
    if is_terminal(state):
        return {}
    contract = TaskContract.model_validate(state["contract"])
    report = state.get("verification")  # the verifier's verdict on the final candidate
    passed, failed = (
        (report["passed"], report["failed"]) if report else evaluate(contract, state, deps)
    )
    status = RunStatus.PARTIAL if passed else RunStatus.FAILED
    reason = "the fixed workflow ended without passing its checks: " + "; ".join(failed)
    return stop_update(state, contract, deps, status, reason)
