"""The fan-out of a turn's queued requests to the executor: which calls share a task.

Every LangGraph task costs its own checkpoint write (``put_writes``: one commit on disk)
and its own scheduling, so the calls no rule could send to a person go to the executor
together, as one task that runs them side by side — as ``ToolNode`` runs a turn's calls.
A call that may pause for approval keeps a task of its own: a person's answer resumes just
that call, while the others' results are already in. The shape is fixed when the ``Send``
packets are checkpointed, so a resume never regroups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.types import Send

from execgraph.nodes.executor import ExecutorDeps
from execgraph.nodes.executor.refusals import may_ask_again
from execgraph.state.contracts import ToolRef
from execgraph.state.errors import ExecGraphError

__all__ = ["executor_sends", "may_pause", "split_pausable"]


def may_pause(request: dict[str, Any], deps: ExecutorDeps) -> bool:
    """Whether the executor could ask a person about this request (a safe over-estimate).

    A request that cannot resolve is refused by the gate before any policy applies. Only
    the tool reference and the rules are read: the gate validates the rest.
    """
    if request.get("approval_asked") is not None:  # the model asked a person first
        return True
    tool = ToolRef.model_validate(request["tool"])
    try:
        spec = deps.registry.resolve(tool.name, tool.requested_version)
    except ExecGraphError:
        return False
    if deps.policy.with_rules(request.get("approval_rules") or ()).may_ask(spec):
        return True
    return may_ask_again(deps.store, str(request["run_id"]), spec)  # a person's no sticks


def split_pausable(
    pending: Sequence[dict[str, Any]], deps: ExecutorDeps
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The requests no rule could pause, and those that may pause (each in queue order)."""
    free: list[dict[str, Any]] = []
    pausable: list[dict[str, Any]] = []
    for request in pending:
        (pausable if may_pause(request, deps) else free).append(request)
    return free, pausable


def executor_sends(pending: Sequence[dict[str, Any]], deps: ExecutorDeps) -> list[Send]:
    """One ``Send`` per call that may pause, one for all the others (in queue order)."""
    if len(pending) == 1:  # nothing to group
        return [Send("executor", {"request": pending[0]})]
    together, alone = split_pausable(pending, deps)
    sends = [Send("executor", {"request": r}) for r in alone]
    if len(together) == 1:
        sends.append(Send("executor", {"request": together[0]}))
    elif together:
        sends.append(Send("executor", {"batch": together}))
    return sends
