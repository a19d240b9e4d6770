"""The run's whole record: every outcome and all evidence, from the execution store.

State keeps bounded windows (the newest results and evidence) so a step costs the same at
step 1,000 as at 10; the execution store keeps everything. A verdict — accepting a
finish, listing what is confirmed and what is open — must see everything, so it pages
through the run's committed records once, when it is made. Results state has let go of
are folded as they are read: their evidence joins the set, and they are summarized per
tool and outcome, so the view (and the memory to build it) does not grow with the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.runtime import RunDeps
from state.reducers import merge_evidence

__all__ = ["PAGE", "full_view"]

PAGE = 256  # records read per query while folding a long run
_WHOLE = "__whole_record__"  # marks a view already completed from the store


def _summary_key(result: Mapping[str, Any]) -> str:
    return f"earlier:{result.get('tool_name')}:{result.get('outcome')}:{result.get('status')}"


def full_view(state: Mapping[str, Any], run_id: str, deps: RunDeps) -> dict[str, Any]:
    """``state`` with ``results`` and ``evidence`` completed from the store's records.

    ``results`` holds state's own (the newest, complete; a refusal never reserved lives
    only there) plus, per tool, outcome and status, one summary of the earlier ones with
    their ``count``; ``evidence`` is merged again as one set over the whole run, so
    conflicts anywhere in it are flagged. A view that is already whole is returned as is.
    """
    if state.get(_WHOLE):
        return dict(state)
    recent: dict[str, dict[str, Any]] = dict(state.get("results") or {})
    earlier: dict[str, dict[str, Any]] = {}
    evidence: dict[str, dict[str, Any]] = {}
    offset = 0
    while True:
        page = deps.executor.store.committed(run_id, offset=offset, limit=PAGE)
        for record in page:
            result = record.result
            if result is None or record.call_id in recent:
                continue
            key = _summary_key(result)
            seen = earlier.get(key)
            earlier[key] = {
                "call_id": key,
                "tool_name": result.get("tool_name"),
                "outcome": result.get("outcome"),
                "status": result.get("status"),
                "count": (seen or {}).get("count", 0) + 1,
            }
            evidence = merge_evidence(evidence, result.get("evidence") or [], window=None)
        if len(page) < PAGE:
            break
        offset += PAGE
    for result in recent.values():
        evidence = merge_evidence(evidence, result.get("evidence") or [], window=None)
    evidence = merge_evidence(evidence, state.get("evidence"), window=None)
    return {**state, "results": {**earlier, **recent}, "evidence": evidence, _WHOLE: True}
