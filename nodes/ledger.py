"""The run's whole record: every result and all evidence, from the execution store.

State keeps bounded windows (the newest results and evidence) so a step costs the same at
step 1,000 as at 10; the execution store keeps everything. A verdict — accepting a
finish, listing what is confirmed and what is open — must see everything, so it reads the
run's committed records once, when it is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.runtime import RunDeps
from state.reducers import merge_evidence, merge_results

__all__ = ["full_view"]

_WHOLE = "__whole_record__"  # marks a view already completed from the store


def full_view(state: Mapping[str, Any], run_id: str, deps: RunDeps) -> dict[str, Any]:
    """``state`` with ``results`` and ``evidence`` completed from the store's records.

    Results in state win over the store's (a refusal never reserved lives only in state);
    evidence is merged again as one set, so conflicts across the whole run are flagged.
    A view that is already whole is returned as is (one read per verdict).
    """
    if state.get(_WHOLE):
        return dict(state)
    stored = {
        r.call_id: r.result for r in deps.executor.store.committed(run_id) if r.result is not None
    }
    results = merge_results(stored, state.get("results"), window=None)
    items = [item for result in results.values() for item in result.get("evidence") or []]
    evidence = merge_evidence({}, items, window=None)
    evidence = merge_evidence(evidence, state.get("evidence"), window=None)
    return {**state, "results": results, "evidence": evidence, _WHOLE: True}
