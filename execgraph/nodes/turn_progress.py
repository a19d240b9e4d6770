"""Observe: the executor's results for this turn -> progress signal for the loop guard.

Results and evidence were already merged into state by their reducers as each executor
call returned; what is left is to judge the turn as a whole (did anything new happen?)
and clear the queue. Every successful call left evidence (an ordinary tool's is an
``observation`` whose value is its data), but the guard counts an evidence *fact* by kind
and value only, so a repeated identical call that saw the same data moves nothing, while
new data — a new page, a poll that changed — is progress.

It also records what each tool's calls came to (:mod:`execgraph.nodes.run_actions`): the
calls queued for the turn and any call of its decisions that was answered without being
queued (a publish call a person rejected at hybrid's approval node).
"""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor import stable_hash
from execgraph.nodes.loop_guard import update_progress
from execgraph.nodes.run_actions import tool_outcomes
from execgraph.state.contracts import RunStatus
from execgraph.state.schema import RunState

__all__ = ["observe"]


def observe(state: RunState) -> dict[str, Any]:
    """Fold this turn's actions and observations into the loop guard."""
    results = state.get("results") or {}
    pending = state.get("pending") or []
    actions = [
        (r["tool"]["name"], r.get("arguments") or {}, results.get(r["call_id"])) for r in pending
    ]
    update: dict[str, Any] = {"pending": []}
    called = [r["call_id"] for r in pending]
    called += [d["call_id"] for d in state.get("decisions") or [] if d.get("call_id")]
    tools = tool_outcomes(dict.fromkeys(called), results)
    if actions:
        turn = stable_hash(sorted(r["call_id"] for r in pending))[:12]
        update["progress"] = update_progress(state.get("progress"), actions, turn)
    elif tools:  # calls answered without running (rejected at an approval node): a record
        update["progress"] = {"turn": stable_hash(sorted(set(called)))[:12]}
    if tools:
        update["progress"]["tools"] = tools
    if state.get("status") == RunStatus.WAITING.value:
        update["status"] = RunStatus.RUNNING.value
    return update
