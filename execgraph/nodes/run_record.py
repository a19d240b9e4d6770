"""The run's whole record: every outcome and all evidence, from the execution store.

State keeps bounded windows (the newest results and evidence) so a step costs the same at
step 1,000 as at 10; the execution store keeps everything. A verdict — accepting a
finish, listing what is confirmed and what is open — must see everything, so it asks the
store once, when it is made, for what a verdict looks at: the run's calls counted per
tool, outcome and status (one aggregate query) and the evidence items (only the records
that carry any). Neither grows with the number of calls that left no evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from execgraph.nodes.deps import RunDeps
from execgraph.state.reducers import merge_evidence

__all__ = ["full_view"]

_WHOLE = "__whole_record__"  # marks a view already completed from the store


def full_view(state: Mapping[str, Any], run_id: str, deps: RunDeps) -> dict[str, Any]:
    """``state`` with ``results`` and ``evidence`` completed from the store.

    ``results`` holds state's own (the newest, complete; a refusal never reserved lives
    only there) plus one summary per tool, outcome and status of every committed call,
    with its ``count``; ``evidence`` is merged again as one set over the whole run, so
    conflicts anywhere in it are flagged. A view that is already whole is returned as is.
    """
    if state.get(_WHOLE):
        return dict(state)
    store = deps.executor.store
    summaries = {
        f"all:{c.tool}:{c.outcome}:{c.status}": {
            "call_id": f"all:{c.tool}:{c.outcome}:{c.status}",
            "tool_name": c.tool,
            "outcome": c.outcome,
            "status": c.status,
            "count": c.count,
        }
        for c in store.outcomes(run_id)
    }
    recent = dict(state.get("results") or {})
    evidence = merge_evidence({}, store.evidence(run_id), window=None)
    for result in recent.values():
        evidence = merge_evidence(evidence, result.get("evidence") or [], window=None)
    evidence = merge_evidence(evidence, state.get("evidence"), window=None)
    return {**state, "results": {**summaries, **recent}, "evidence": evidence, _WHOLE: True}
