"""RunDeps: what the runtime nodes of every architecture work with.

Bound into the nodes when a graph is built (``functools.partial``), so node functions stay
plain top-level functions and the compiled graph carries no hidden globals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel

from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.state.contracts import SuccessCheck, TaskContract

__all__ = ["CONTROL_TOOLS", "CheckFn", "RunDeps"]

CheckFn = Callable[[SuccessCheck, Mapping[str, Any], TaskContract], str | None]
"""A success check: returns None when it holds, else a short reason it does not."""

CONTROL_TOOLS = ("finish", "ask_user", "abort", "revise_plan")
"""Names the model uses for decisions that are not actions; no tool may take them."""


@dataclass(frozen=True)
class RunDeps:
    """Model, executor and settings shared by the nodes of one compiled graph.

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
        system_prompt: Extra instructions prepended to the projected context.
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

    def __post_init__(self) -> None:
        # The executor writes each call's ToolMessage with the observation text the model
        # will see, so it bounds that text as the run does.
        if self.executor.observation_chars != self.observation_chars:
            executor = replace(self.executor, observation_chars=self.observation_chars)
            object.__setattr__(self, "executor", executor)
