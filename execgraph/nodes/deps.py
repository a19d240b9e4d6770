"""RunDeps: what the runtime nodes of every architecture work with.

Bound into the nodes when a graph is built (``functools.partial``), so node functions stay
plain top-level functions and the compiled graph carries no hidden globals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel

from execgraph.nodes.answer_format import AnswerFormat
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.contracts import SuccessCheck, TaskContract
from execgraph.state.errors import UsageError
from execgraph.state.errors.tool_bugs import TOOL_ERRORS, ToolErrors

__all__ = [
    "CONTEXTS",
    "CONTRACTS",
    "CONTROL_TOOLS",
    "CheckFn",
    "ContextMode",
    "ContractMode",
    "RunDeps",
]

CheckFn = Callable[[SuccessCheck, Mapping[str, Any], TaskContract], str | None]
"""A success check: returns None when it holds, else a short reason it does not."""

CONTROL_TOOLS = ("finish", "ask_user", "abort", "revise_plan", "request_approval", "wait_for")
"""Names the model uses for decisions that are not actions; no tool may take them."""

ContextMode = Literal["projected", "full"]
"""How the model input is made: the bounded state projection, or the whole transcript."""
CONTEXTS: tuple[str, ...] = get_args(ContextMode)
ContractMode = Literal["task", "least_privilege"]
CONTRACTS: tuple[str, ...] = get_args(ContractMode)

_FLAGS = ("tools_enabled", "verifier_gate", "loop_guard")


@dataclass(frozen=True)
class RunDeps:
    """Model, executor and settings shared by the nodes of one compiled graph.

    The last four settings are ablations: each turns one mechanism off, so
    a run can measure what that mechanism buys on the same task; by default all are on.

    Attributes:
        model: Any LangChain chat model with ``bind_tools``.
        executor: The executor's registry, policy and store.
        workspace_root: Where file paths of a run are confined.
        checks: Success-check kinds beyond the built-in ones.
        max_repairs: Extra model calls allowed to repair malformed output, per turn.
        history_turns: Recent turns shown to the model.
        observation_chars: Bound on one observation's text in the model input.
        loop_threshold: Turns without progress before the run stops.
        max_replans: Replans allowed to plan-and-execute before it gives up.
        system_prompt: The developer's instructions (trusted), in the system message in a
            section of their own beside the runtime's rules.
        tools_enabled: False offers the model only the control tools (``finish``,
            ``ask_user``, ``abort``; plan-and-execute's ``submit_plan`` and
            ``revise_plan``): it must answer from what it knows. A tool it calls anyway is
            refused by the executor as not offered (``tool.denied``, never run); a plan
            naming a tool is refused as malformed. Measures what acting buys over answering.
        verifier_gate: False ends a run COMPLETED on the model's ``finish`` without running
            the success checks; the ``verifier.verdict`` event still logs it, with
            ``"gated": false``. Measures how many finishes the gate stops that an
            independent acceptance check would fail.
        loop_guard: False never stops a run for turns without progress (repeated actions,
            nothing new observed); the budgets and deadline still bound it. Measures the
            budget a repeating model burns without the guard.
        context: ``"projected"`` (the default) is the bounded state projection:
            ``history_turns`` recent turns, observations cut at ``observation_chars``,
            the newest evidence items, shortened. ``"full"`` shows every turn of the run
            with its complete tool outputs and every evidence item whole. Measures what
            the projection saves in input tokens per decision.
        tool_errors: Where an exception a tool raises undeclared (a bug, not a
            ``ToolException`` or ``ModelRetry``) goes. ``"raise"`` (the default, as
            ``create_agent``): the run stops FAILED at once and ``invoke`` raises it
            (:mod:`execgraph.state.errors.tool_bugs`). ``"model"``: the model is told the
            tool failed with that exception type, its text withheld, and goes on.
    """

    model: BaseChatModel
    executor: ExecutorDeps
    workspace_root: str
    checks: Mapping[str, CheckFn] = field(default_factory=dict)
    max_repairs: int = 2
    history_turns: int = 8
    observation_chars: int = 2000
    loop_threshold: int = 3
    max_replans: int = 3
    system_prompt: str = ""
    tools_enabled: bool = True
    verifier_gate: bool = True
    loop_guard: bool = True
    context: ContextMode = "projected"
    tool_errors: ToolErrors = "raise"
    release_ref: str | None = None
    """The release of the agent and its tools this graph is (a version, a commit, an image
    digest). Admission binds each run to it; a run bound to another is not resumed here
    (:class:`~execgraph.state.errors.ReleaseMismatch`)."""
    answer_format: AnswerFormat | None = None
    """The structure a run's final answer must have (``build_graph``'s
    ``response_format``): ``finish`` takes its fields (:mod:`execgraph.nodes.answer_format`)."""
    contract: ContractMode = "task"
    """``"task"``: the contract is the task as given. ``"least_privilege"``: before the
    run reads anything, a planner that sees only the request and the tools' declarations
    narrows it to the tools and argument values the task needs, frozen for the run
    (:mod:`execgraph.nodes.least_privilege`)."""

    def __post_init__(self) -> None:
        # ``build_graph`` passes these through from keywords: a typo'd value must fail at
        # build, not silently run the default (``"False"`` is a truthy string).
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.contract not in CONTRACTS:
            raise UsageError(
                f"contract must be one of {', '.join(map(repr, CONTRACTS))}, got {self.contract!r}"
            )
        if self.tool_errors not in TOOL_ERRORS:
            raise UsageError(
                f"tool_errors must be one of {', '.join(map(repr, TOOL_ERRORS))}, "
                f"got {self.tool_errors!r}"
            )
        if self.context not in CONTEXTS:
            raise UsageError(
                f"context must be one of {', '.join(map(repr, CONTEXTS))}, got {self.context!r}"
            )
        # The executor writes each call's ToolMessage with the observation text the model
        # will see, so it bounds that text as the run does.
        if self.executor.observation_chars != self.observation_chars:
            executor = replace(self.executor, observation_chars=self.observation_chars)
            object.__setattr__(self, "executor", executor)

    @property
    def observation_limit(self) -> int:
        """Bound on one observation's text in the model input (none with full context)."""
        return self.observation_chars if self.context == "projected" else sys.maxsize
