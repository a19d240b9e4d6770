"""What this run has observed of each target: a write carries it as its compare-and-swap guard.

Optimistic concurrency without asking the model for anything. A tool opts in with two
declarations (see ``ToolSpec``): ``targets`` names what a call acts on as its evidence's
``source_id`` (``file:{path}``, the ``file:notes.txt`` a ``read_file`` reports) and
``read_state`` answers that name with the target's current state (a file's sha256, the
``value`` of that evidence). When a run that has observed a target then writes it, the
request gets ``expected_state = {target: the observed value}``; validate re-reads the
target and refuses a write based on a stale read with ``StateGuardMismatch`` (retryable:
read again, then write). The run's own verified write updates the observation, so a second
write of the same file is guarded by the first one's result.

What the run observed is the ``evidence`` channel, keyed by source id: one dictionary
lookup per target, no store read and no probe here. A target observed with contrary values
at one version (a flagged conflict) or dropped from the bounded evidence window guards
nothing. An ``expected_state`` the caller gave keeps its own values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.nodes.executor import canonical_arguments, resolve, target_names
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ExecGraphError
from execgraph.tools.registry import ToolRegistry

__all__ = ["guard_writes", "observed_state"]


def observed_state(
    request: ToolExecutionRequest,
    registry: ToolRegistry,
    evidence: Mapping[str, Mapping[str, Any]],
) -> dict[str, str]:
    """What the run observed of the targets ``request`` would change ({} if none, or if it
    is a read, or a tool that cannot read its targets' state)."""
    try:
        spec = resolve(request, registry)
        if spec.effect == "read" or spec.read_state is None or not spec.targets:
            return {}
        arguments, _ = canonical_arguments(request.arguments, spec)  # as the executor names
    except ExecGraphError:
        return {}  # the executor refuses it with its typed error
    observed: dict[str, str] = {}
    for name in target_names(spec, arguments):
        item = evidence.get(name)
        if item is not None and not item.get("conflict") and isinstance(item.get("value"), str):
            observed[name] = item["value"]
    return observed


def guard_writes(
    requests: Sequence[ToolExecutionRequest],
    registry: ToolRegistry,
    evidence: Mapping[str, Mapping[str, Any]] | None,
) -> list[ToolExecutionRequest]:
    """``requests``, each write carrying what the run observed of its targets as its
    ``expected_state``."""
    if not evidence:
        return list(requests)
    guarded = []
    for request in requests:
        observed = observed_state(request, registry, evidence)
        if observed:
            expected = {**observed, **request.expected_state}
            request = request.model_copy(update={"expected_state": expected})
        guarded.append(request)
    return guarded
