"""A call taken over from an owner that is gone: resumed if it paused, else reconciled.

The crashed attempt may have had its effect, so it is never blindly run again: an attempt
that paused the run (a tool's ``interrupt()``, :mod:`.paused`) resumes from its start;
any other is reconciled by the tool's probe (:mod:`.probe`), and a decided outcome is
committed, freeing the crashed attempt's locks with the commit. An undecided one runs
again, once the gone owner's locks are released — unless its owner was only taken over
because its lease lapsed (not proved gone: it may be stalled and act when it wakes) and
the write is not idempotent: then it is ``unknown``, for a person to reconcile. Locks of
any gone owner on the call's keys are released first: after two crashes in a row, the
first owner's are no longer the last owner's.
"""

from __future__ import annotations

from dataclasses import dataclass

from execgraph.nodes.executor.call import Call
from execgraph.nodes.executor.recovery.paused import resumes_pause
from execgraph.nodes.executor.recovery.probe import in_doubt
from execgraph.nodes.executor.stages.lock import Locked, lock_keys, lock_owner
from execgraph.nodes.executor.stages.outcome import Settled
from execgraph.state.errors import ExecGraphError
from execgraph.state.events import EventType
from execgraph.state.store.base import ExecutionRecord
from execgraph.state.store.worker import worker_id
from execgraph.tools.invocation import InvokeContext

__all__ = ["Recovered", "take_over"]


@dataclass(frozen=True)
class Recovered:
    """The crashed attempt's outcome, and its locks, to free with the commit."""

    settled: Settled
    locked: Locked


def take_over(
    call: Call, previous: ExecutionRecord, ctx: InvokeContext, *, may_still_run: bool = False
) -> Recovered | None:
    """The crashed attempt's outcome when it is decided; None when the call is to run.

    ``previous`` is the record as the gone owner left it; ``call`` now holds it. With
    ``may_still_run`` (its lease lapsed, its owner not proved gone) a write is run again
    only if it is idempotent (:func:`~.probe.in_doubt`).
    """
    assert call.authorized is not None
    args, arguments = call.authorized.validated.args, call.authorized.validated.normalized.arguments
    settled = (
        None
        if resumes_pause(previous)
        else in_doubt(call.spec, args, ctx, call.report, may_still_run=may_still_run)
    )
    try:
        keys = lock_keys(call.spec, arguments, call.request.workspace)
    except ExecGraphError:
        keys = ()
    crashed = Locked(keys=keys, owner=lock_owner(previous.owner, call.key), queued_ms=0)
    if crashed.keys:
        # A worker that died while taking the call over left its predecessor's locks
        # held: the commit frees only the last owner's, so free every gone owner's here.
        call.deps.store.release_gone_locks(crashed.keys)
    if settled is not None:
        call.attempt_event(
            EventType.TOOL_RECONCILED,
            payload={"outcome": settled.outcome, "committed": settled.side_effect.committed},
        )
        return Recovered(settled, crashed)  # the crashed attempt's locks are its owner's
    if crashed.keys and crashed.owner != lock_owner(worker_id(), call.key):
        call.deps.store.release_locks(crashed.keys, crashed.owner)
    return None
