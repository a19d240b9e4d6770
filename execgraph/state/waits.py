"""Waits with deadlines: how long a run may wait for a person or an event, and what then.

A run waits on a LangGraph interrupt: for a person's approval of a call, for an answer to
the model's ``ask_user`` question, for an event named by the model's ``wait_for`` (or a
tool's own ``interrupt()``). Every wait is stamped when it starts, by the execution store's
clock (``store.clock()``, one clock for every worker), and has a deadline: the rule's
``timeout_s``, else the runtime's default (24 hours), never past the run's own deadline.

What happens when the deadline passes (judged by the same clock, when the run is next
resumed or answered: :func:`~execgraph.engines.waits.expired_answers`; on Temporal the
workflow resumes itself at the deadline, with a timer):

- ``reject`` (the default): the wait ends unanswered; an approval is refused, the model is
  told that no answer came, and the run goes on;
- ``cancel``: the run is cancelled (it stops ``CANCELLED``);
- ``escalate``: the wait is asked again, once, of ``escalate_to``, with a new deadline; if
  that one passes too, the wait is rejected.

A task sets the default for its run (``TaskSpec.waits``) and per tool
(``waits.tools[name]``: the approvals of that tool, and the questions the tool asks
itself with ``interrupt()``: expired, such a call is recorded as not completed,
:mod:`execgraph.nodes.executor.recovery.tool_wait`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_WAIT_S", "OnExpiry", "WaitPolicy", "WaitRule", "wait_deadline"]

DEFAULT_WAIT_S = 24 * 3600.0
"""How long a wait lasts when no rule says (the executor's ``approval_ttl_s`` for approvals)."""

OnExpiry = Literal["reject", "cancel", "escalate"]
"""What a wait's expiry does (see the module)."""


class WaitRule(BaseModel):
    """How long one kind of wait lasts and what its expiry does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds from the start of the wait to its deadline (None: the runtime's default)."""
    on_expiry: OnExpiry = "reject"
    escalate_to: str = Field(default="", max_length=200)
    """Who an escalated wait is asked of (shown with the question)."""


class WaitPolicy(WaitRule):
    """A run's waits: the default rule, with one per tool (its approvals) in ``tools``,
    and the names of the events the model may wait for (``wait_for``: none, not offered)."""

    tools: dict[str, WaitRule] = Field(default_factory=dict)
    events: list[str] = Field(default_factory=list, max_length=100)

    def for_tool(self, name: str) -> WaitRule:
        """The rule for the approvals of tool ``name``."""
        found = self.tools.get(name)
        if found is not None:
            return found
        return WaitRule(
            timeout_s=self.timeout_s, on_expiry=self.on_expiry, escalate_to=self.escalate_to
        )


def wait_deadline(
    now: float, rule: WaitRule | None, default_s: float, run_deadline: float | None
) -> float:
    """When a wait started at ``now`` expires: the rule's timeout (else ``default_s``),
    never past the run's deadline."""
    timeout = rule.timeout_s if rule is not None and rule.timeout_s is not None else default_s
    until = now + timeout
    return until if run_deadline is None else min(until, run_deadline)
