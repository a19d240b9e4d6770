"""A call taken over from an owner that is gone: resumed if it paused, else reconciled.

The crashed attempt may have had its effect, so it is never blindly run again: an attempt
that paused the run (a tool's ``interrupt()``, :mod:`.paused`) resumes from its start;
any other is reconciled (:mod:`.reconcile`), and a decided outcome is committed, freeing
the crashed attempt's locks with the commit. An undecided one runs again, once the gone
owner's locks are released. Locks of any gone owner on the call's keys are released
first: after two crashes in a row, the first owner's are no longer the last owner's.
"""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor import lease
from execgraph.nodes.executor.call_events import call_event
from execgraph.nodes.executor.commit import build_result
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.finish import finish
from execgraph.nodes.executor.lock import lock_keys
from execgraph.nodes.executor.paused import resumes_pause
from execgraph.nodes.executor.raised import Raised
from execgraph.nodes.executor.reconcile import in_doubt
from execgraph.nodes.executor.stages import Finished, Locked, Reserved, Staged
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ExecGraphError
from execgraph.state.events import EventType
from execgraph.state.store.base import ExecutionRecord
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["settle_taken_over"]


def settle_taken_over(
    staged: Staged,
    deps: ExecutorDeps,
    held: Reserved,
    previous: ExecutionRecord,
    ctx: InvokeContext,
    raised: Raised,
    owner: str,
) -> Finished | None:
    """The finished call when the crashed attempt is decided; None when it is to run.

    ``held`` is the record as this worker (``owner`` of its locks) took it over,
    ``previous`` as the gone owner left it.
    """
    request, authorized, attempt_id = staged.request, staged.authorized, staged.attempt_id
    events, key, fence = staged.events, held.key, held.record.fence
    spec, args = authorized.spec, authorized.validated.args
    settled = None if resumes_pause(previous) else in_doubt(spec, args, ctx, raised)
    crashed = Locked(
        keys=_keys_or_none(spec, authorized.validated.normalized.arguments, request),
        owner=lease.lock_owner(previous.owner, key),
        queued_ms=0,
    )
    if crashed.keys:
        # A worker that died while taking the call over left its predecessor's locks
        # held: the commit frees only the last owner's, so free every gone owner's here.
        deps.store.release_gone_locks(crashed.keys)
    if settled is not None:
        events.append(
            call_event(
                request,
                EventType.TOOL_RECONCILED,
                attempt_id=attempt_id,
                payload={
                    "outcome": settled.outcome,
                    "committed": settled.side_effect.committed,
                },
            )
        )
        result = build_result(request, spec.version, settled, key=key, attempt_id=attempt_id)
        # The crashed attempt's locks are its owner's: free them with the commit.
        return finish(request, deps, key, result, events, crashed, authorized, fence)
    if crashed.keys and crashed.owner != owner:
        deps.store.release_locks(crashed.keys, crashed.owner)
    return None


def _keys_or_none(
    spec: ToolSpec, arguments: dict[str, Any], request: ToolExecutionRequest
) -> tuple[str, ...]:
    try:
        return lock_keys(spec, arguments, request.workspace.id)
    except ExecGraphError:
        return ()
