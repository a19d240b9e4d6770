"""A proposed call's provenance, from what the run's record holds.

Provenance (:mod:`execgraph.tools.provenance`) is computed from two things, both read from
the execution store, never from the request a caller hands the executor (a caller could
claim anything there):

- the trusted inputs: every request admitted on the run (``run.admitted`` events: the
  user's goal or message), plus values a person typed into an approval (an *edit*);
- the observations: every committed result of the run, whole (data bounded into an
  artifact is read back from it), each with its tool's declared
  :class:`~execgraph.tools.provenance.OutputProvenance`;
- the refusals: the sensitive values of calls a person rejected earlier in the run, so a
  denial sticks (the same recipient is not asked about twice).

So a value the model read thirty calls ago, long gone from the state's bounded windows,
still counts as read from that call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from execgraph.state.errors import ExecGraphError
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.provenance import (
    ArgumentProvenance,
    Observation,
    OutputProvenance,
    TrustedInputs,
)
from execgraph.tools.provenance_labels import label_arguments
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.value_match import atoms_of

__all__ = [
    "PROVENANCE_EVENTS",
    "call_provenance",
    "recorded_observations",
    "refused_values",
    "trusted_inputs",
]

PROVENANCE_EVENTS = (
    EventType.RUN_ADMITTED,
    EventType.TOOL_REQUESTED,
    EventType.APPROVAL_RESOLVED,
)
"""The kinds of events provenance reads (requests, calls' arguments, a person's answers):
a long run's log is read without its model replies and the rest."""


def trusted_inputs(
    events: Iterable[Event], typed: Mapping[str, Any] | None = None
) -> TrustedInputs:
    """The run's trusted inputs: its admitted requests, and what a person typed."""
    texts: dict[str, str] = {}
    admitted = [e for e in events if e.type == EventType.RUN_ADMITTED]
    for i, event in enumerate(admitted):
        goal = event.payload.get("goal")
        if isinstance(goal, str) and goal:
            texts["request" if i == 0 else f"request #{i + 1}"] = goal
    values = {"person": list(typed.values())} if typed else {}
    return TrustedInputs(texts=texts, values=values)


def refused_values(events: Iterable[Event], registry: ToolRegistry) -> list[Any]:
    """The sensitive argument values of the calls a person rejected in this run: a denial
    sticks, so the same value is refused again without asking."""
    seen = list(events)
    requested = _requested(seen)
    tools = {
        e.call_id: str(e.payload.get("tool", ""))
        for e in seen
        if e.type == EventType.TOOL_REQUESTED
    }
    found: list[Any] = []
    for event in seen:
        if event.type != EventType.APPROVAL_RESOLVED or event.payload.get("action") != "reject":
            continue
        call = event.call_id or ""
        try:
            sensitive = registry.resolve(tools.get(call, "")).sensitive_args
        except ExecGraphError:
            continue
        arguments = requested.get(call, {})
        found += [a for name in sensitive for a in atoms_of(arguments.get(name))]
    return found


def _requested(events: Iterable[Event]) -> dict[str, dict[str, Any]]:
    """Each call's arguments, as its ``tool.requested`` event logged them."""
    return {
        e.call_id: dict(e.payload.get("arguments") or {})
        for e in events
        if e.type == EventType.TOOL_REQUESTED and e.call_id
    }


def _declared(registry: ToolRegistry, name: str) -> OutputProvenance:
    try:
        return registry.resolve(name).output_provenance
    except ExecGraphError:  # a tool no longer offered: its output says nothing trusted
        return OutputProvenance()


def _whole(store: ExecutionStore, data: Any) -> Any:
    """Data as the tool returned it: an artifact-bounded value read back whole."""
    if isinstance(data, Mapping) and set(data) == {"artifact", "preview"}:
        try:
            return json.loads(store.get_artifact(str(data["artifact"])).decode())
        except (ExecGraphError, ValueError, KeyError):
            return data.get("preview", "")
    return data


def recorded_observations(
    store: ExecutionStore,
    run_id: str,
    registry: ToolRegistry,
    events: Iterable[Event] | None = None,
) -> list[Observation]:
    """Every committed result of the run with data, oldest first, with its call's
    arguments (from ``events``, the run's log, read if not given)."""
    arguments = _requested(
        store.events(run_id, types=PROVENANCE_EVENTS) if events is None else events
    )
    found = []
    for record in store.committed(run_id):
        result = record.result or {}
        data = result.get("data")
        if data is None:
            continue
        found.append(
            Observation(
                call_id=record.call_id,
                tool=record.tool,
                data=_whole(store, data),
                arguments=arguments.get(record.call_id, {}),
                declared=_declared(registry, record.tool),
            )
        )
    return found


def call_provenance(
    store: ExecutionStore,
    registry: ToolRegistry,
    run_id: str,
    arguments: Mapping[str, Any],
    *,
    typed: Mapping[str, Any] | None = None,
    only: Iterable[str] | None = None,
) -> dict[str, ArgumentProvenance]:
    """Label a proposed call's arguments from the run's record (see the module docstring).

    ``typed``: arguments a person set in an approval edit (trusted as typed).
    """
    events = store.events(run_id, types=PROVENANCE_EVENTS)
    return label_arguments(
        arguments,
        trusted_inputs(events, typed),
        recorded_observations(store, run_id, registry, events),
        only=only,
        refused=refused_values(events, registry),
    )
