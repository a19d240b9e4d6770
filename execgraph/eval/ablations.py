"""The ablations, as named ``build_graph`` settings.

Each ablation switches off one control mechanism and keeps everything else (tasks, policy
model, seeds, budgets) fixed, so the difference to ``baseline`` is that mechanism's effect:

- ``baseline``: every mechanism on (the defaults).
- ``tools_off`` (``tools_enabled=False``): no tool call vs tool calls. The model is offered
  only the control tools and must answer from what it knows; measures what acting buys:
  acceptance should drop.
- ``gate_off`` (``verifier_gate=False``): no acceptance gate vs a programmatic one. A
  ``finish`` ends the run COMPLETED unjudged; measures how often a model's claim of
  completion is wrong: ``completed_but_failed_rate`` should rise.
- ``loop_guard_off`` (``loop_guard=False``): no repeat limit vs one. Repeated identical
  actions never stop the run (only the budgets do); measures what the guard saves:
  ``ineffective_loop_ratio`` and ``cost_per_success_usd`` should rise.
- ``full_history`` (``context="full"``): the whole transcript vs the projected state as the
  model input; measures the cost of context growth: ``input_tokens_per_decision`` rises.

The fifth comparison of 15.1, fixed workflow vs dynamic loop, is no setting: it is the
architecture, :data:`FIXED_VS_DYNAMIC` (``"workflow"`` vs ``"react"``), compared under
``baseline``. A user can run any ablation on their own graph:
``build_graph(arch, ..., **ABLATIONS["gate_off"])``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ABLATIONS", "BASELINE", "FIXED_VS_DYNAMIC"]

BASELINE = "baseline"

ABLATIONS: dict[str, dict[str, Any]] = {
    BASELINE: {},
    "tools_off": {"tools_enabled": False},
    "gate_off": {"verifier_gate": False},
    "loop_guard_off": {"loop_guard": False},
    "full_history": {"context": "full"},
}
"""Ablation name -> the ``build_graph`` settings it passes (``baseline`` passes none)."""

FIXED_VS_DYNAMIC: tuple[str, str] = ("workflow", "react")
"""The architectures compared for "fixed workflow vs dynamic loop" (fixed first)."""
