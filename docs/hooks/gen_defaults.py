"""The runtime's defaults, read from the code that applies them.

A page that says "50 model calls unless the task says otherwise" would go stale the day
the default changes; the budgets page shows these tables instead, rendered at build time
from the very constants and dataclass defaults the runtime uses. A setting renamed or
moved fails the build, which is the point.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["budget_defaults", "limits", "run_settings"]

_BUDGETS = {
    "model_calls": "model calls (each repair of a malformed reply counts)",
    "tool_calls": "tool calls dispatched (each retry counts)",
    "tokens_in": "input tokens, as the model reports them",
    "tokens_out": "output tokens",
    "wall_time_s": "seconds since the run was admitted; reaches the running tool as its deadline",
    "cost_usd": "model tokens priced with `prices=`, plus each tool's declared `cost_usd`",
}

_SETTINGS = {
    "max_repairs": "extra model calls a turn may spend repairing a malformed reply",
    "history_turns": "recent turns shown to the model",
    "observation_chars": "characters of one observation shown to the model",
    "loop_threshold": "turns without progress before the loop guard stops the run",
    "max_replans": "replans plan-and-execute may make before it gives up",
    "system_prompt": "extra instructions put before the projected context",
    "tools_enabled": "offer the tools (False: only the control tools)",
    "verifier_gate": "judge a finish by the success checks (False: a finish completes)",
    "loop_guard": "stop a run that repeats itself without new evidence",
    "context": '`"projected"` (bounded) or `"full"` (every turn, whole outputs)',
}

_LIMITS = {
    "approval_ttl_s": "seconds an approval request stays answerable (or the run's deadline)",
    "lock_timeout_s": "seconds a call waits for its resource locks",
    "default_timeout_s": "a tool call's deadline when the tool declares no `timeout_s`",
    "output_budget": "bytes of output an adapter keeps of one call",
}


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def _value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"`{value:,}`"
    return f"`{value!r}`" if isinstance(value, str) else f"`{value}`"


def budget_defaults() -> str:
    """Each budget kind, what it counts, and its cap when a task sets none."""
    from execgraph.nodes.admission import DEFAULT_BUDGETS
    from execgraph.state.contracts import BudgetKind

    rows = []
    for kind in BudgetKind:
        cap = DEFAULT_BUDGETS.get(kind)
        rows.append(
            [f"`{kind.value}`", _BUDGETS[kind.value], "none" if cap is None else _value(cap)]
        )
    return _table(["budget", "counts", "default cap"], rows)


def _defaults(cls: type) -> dict[str, Any]:
    return {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }


def run_settings() -> str:
    """The ``build_graph(**settings)`` a run's nodes take, with their defaults."""
    from execgraph.nodes.deps import RunDeps

    defaults = _defaults(RunDeps)
    rows = [[f"`{name}`", what, _value(defaults[name])] for name, what in _SETTINGS.items()]
    return _table(["setting", "what it bounds", "default"], rows)


def limits() -> str:
    """The executor's fixed limits, the default retry policy and the argument bound."""
    from execgraph.nodes.executor.deps import ExecutorDeps
    from execgraph.state.contracts import DEFAULT_MAX_ARGUMENT_BYTES
    from execgraph.tools.retry import DEFAULT_READ_RETRY

    defaults = _defaults(ExecutorDeps)
    rows = [[f"`{name}`", what, _value(defaults[name])] for name, what in _LIMITS.items()]
    rows.append(
        [
            "`max_argument_bytes` (task)",
            "bytes of one call's normalized JSON arguments",
            _value(DEFAULT_MAX_ARGUMENT_BYTES),
        ]
    )
    retry = DEFAULT_READ_RETRY
    rows.append(
        [
            "retry (reads, idempotent writes)",
            "attempts in all; the first wait, then each wait times the multiplier",
            f"`{retry.max_attempts}` attempts, `{retry.backoff_s}` s × `{retry.multiplier}`",
        ]
    )
    return _table(["limit", "what it bounds", "default"], rows)
