"""The answer channel at the end of a run: where the final answer's parts came from.

A completed run's result carries ``output_sources``: every stretch of the answer copied
from a tool's output (:mod:`execgraph.tools.answer_marks`), with the calls it was read
from and whether it was free text or a structured field there — computed from the run's
whole record, like provenance. An application can show those parts as quoted data or
withhold them. The ``answer_backed`` success check requires that the parts of the answer
matching its ``value`` (a regular expression) are backed by what the user said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from execgraph.nodes.provenance import PROVENANCE_EVENTS, recorded_observations, trusted_inputs
from execgraph.state.contracts import SuccessCheck, TaskContract
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.answer_marks import mark_answer
from execgraph.tools.provenance import Observation, TrustedInputs
from execgraph.tools.provenance_labels import label_value
from execgraph.tools.registry import ToolRegistry

__all__ = ["check_answer_backed", "output_sources"]


def output_sources(
    store: ExecutionStore, registry: ToolRegistry, run_id: str, answer: str | None
) -> list[dict[str, Any]]:
    """The answer's stretches copied from the run's tool output, as dicts."""
    if not answer:
        return []
    events = store.events(run_id, types=PROVENANCE_EVENTS)
    spans = mark_answer(
        answer, trusted_inputs(events), recorded_observations(store, run_id, registry, events)
    )
    return [s.to_dict() for s in spans]


def check_answer_backed(
    check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract
) -> str | None:
    """Every part of the output matching ``value`` is something the user's request says.

    A part read only from a tool's output (or said by nobody) fails the check, with where
    it came from.
    """
    output = view.get("output") or ""
    if not check.value:
        return "answer_backed needs a value: a regular expression naming the parts to check"
    try:
        pattern = re.compile(check.value)
    except re.error as exc:
        return f"answer_backed: {check.value!r} is not a valid pattern: {exc}"
    trusted = TrustedInputs(texts={"request": contract.goal})
    observations = [
        Observation(str(r.get("call_id", "")), str(r.get("tool_name", "")), r.get("data"))
        for r in (view.get("results") or {}).values()
        if r.get("data") is not None
    ]
    for match in pattern.finditer(output):
        label = label_value(match.group(), trusted, observations)
        if label.label != "trusted":
            return (
                f"the answer's {match.group()!r} is not backed by the request: "
                + (label.describe().split(": ", 1)[1])
            )
    return None
