"""Drive runs on Temporal from anywhere: start, answer, cancel, read, wait.

Every method goes through the run's workflow (workflow id = run id), so a person can
approve from another process or machine than the one that started the run. Answers are
an update, signed with the workers' approval key (:mod:`~execgraph.engines.temporal.
approvers`: a client without it cannot answer) and checked by the workflow against the
pending interrupts before they are taken; a cancel is Temporal's own cancellation, which
reaches the running tool. A look at a run's records (its trace, a replay, a pending call
in full) is a short workflow a worker answers.

A run's status is its workflow's answer while the workflow runs or ended by itself; a
workflow ended from outside (``temporal workflow terminate``) ran nothing since, and is
shown ``TERMINATED``, waiting for nothing.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowHistoryEventFilterType,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from execgraph.engines import answers as answering
from execgraph.engines.runs import RunRow
from execgraph.engines.temporal.approvers import sign
from execgraph.engines.temporal.messages import Decision, Look, Reached, RunSpec, RunView
from execgraph.engines.temporal.workflow import ExecgraphLook, ExecgraphRun, Timing
from execgraph.state.errors import UsageError
from execgraph.state.home import Home, check_run_id

__all__ = ["TERMINATED", "TemporalRuns"]

TERMINATED = "TERMINATED"
"""The status of a run whose workflow was ended from outside (``temporal workflow
terminate``, a timeout): nothing of it runs any more, and nothing waits for an answer."""

_ENDED_OUTSIDE = {
    WorkflowExecutionStatus.TERMINATED: "terminated on Temporal",
    WorkflowExecutionStatus.TIMED_OUT: "timed out on Temporal",
    WorkflowExecutionStatus.FAILED: "failed on Temporal",
}


class TemporalRuns:
    """Runs on one Temporal namespace and task queue.

    >>> runs = await TemporalRuns.connect("127.0.0.1:7233", task_queue="execgraph")
    >>> await runs.start(RunSpec("run-1", task={"goal": "..."}))
    >>> await runs.approve("run-1")
    >>> (await runs.result("run-1")).status
    'COMPLETED'

    Answers are signed with ``approval_key``: the workers' key (default:
    ``$EXECGRAPH_APPROVAL_SECRET``, or the ``approval.key`` of the default home).
    """

    def __init__(
        self,
        client: Client,
        task_queue: str,
        heartbeat_s: float = 0.0,
        approval_key: bytes | None = None,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.heartbeat_s = heartbeat_s
        self.approval_key = approval_key

    @classmethod
    async def connect(
        cls,
        address: str = "127.0.0.1:7233",
        *,
        task_queue: str,
        namespace: str = "default",
        heartbeat_s: float = 0.0,
        approval_key: bytes | None = None,
    ) -> TemporalRuns:
        """Connect to the Temporal server at ``address``."""
        client = await Client.connect(address, namespace=namespace)
        return cls(client, task_queue, heartbeat_s, approval_key)

    def _handle(self, run_id: str) -> WorkflowHandle[Any, Any]:
        return self.client.get_workflow_handle(run_id, result_type=Reached)

    async def start(self, spec: RunSpec) -> None:
        """Start ``spec`` as a workflow; a run id already used, or one that is no safe
        file name, is refused (UsageError)."""
        check_run_id(spec.run_id)
        try:
            await self.client.start_workflow(
                ExecgraphRun.run,
                args=[spec, self.heartbeat_s],
                id=spec.run_id,
                task_queue=self.task_queue,
                memo={"arch": spec.arch, "model": spec.model, "tools": spec.tools},
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
        except WorkflowAlreadyStartedError:
            raise UsageError(
                f"run {spec.run_id!r} already exists on Temporal: a run id runs once"
            ) from None
        except RPCError as exc:
            raise UsageError(f"run {spec.run_id!r} cannot start: {exc.message}") from None

    async def status(self, run_id: str) -> RunView:
        """Where the run is (the workflow's query; answered by a worker), or
        ``TERMINATED`` when its workflow was ended from outside."""
        handle = self._handle(run_id)
        described = await handle.describe()
        view: RunView = await handle.query(ExecgraphRun.status)
        ended = _ENDED_OUTSIDE.get(described.status) if described.status else None
        if ended is None:
            return view
        why = await self._close_reason(handle)
        return RunView(
            run_id=view.run_id,
            status=TERMINATED,
            output=view.output,
            error=f"the workflow was {ended}{why}; nothing of the run runs any more",
            advances=view.advances,
            spec=view.spec,
        )

    async def _close_reason(self, handle: WorkflowHandle[Any, Any]) -> str:
        """``: <reason>`` of a terminated workflow, as its close event records it."""
        async for event in handle.fetch_history_events(
            event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
        ):
            reason = event.workflow_execution_terminated_event_attributes.reason
            return f" ({reason})" if reason else ""
        return ""

    def _key(self) -> bytes:
        key = self.approval_key or Home.at().known_secret()
        if not key:
            raise UsageError(
                "answering a run on Temporal needs the workers' approval key: set "
                "EXECGRAPH_APPROVAL_SECRET to it (or give the home holding its approval.key)"
            )
        return key

    async def decide(self, run_id: str, answers: dict[str, Any]) -> RunView:
        """Answer pending interrupts (interrupt id → resume value, as the embedded engine
        takes it), signed with the approval key as the approver the answers name;
        refused with a UsageError when they are not what the run waits for, or not signed
        with the workers' key."""
        named = [str(a.get("approver")) for a in answers.values() if isinstance(a, dict)]
        approver = next((name for name in named if name and name != "None"), "temporal")
        token = sign(self._key(), run_id, answers, approver, time.time())
        try:
            view: RunView = await self._handle(run_id).execute_update(
                ExecgraphRun.decide, Decision(answers, token)
            )
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            message = cause.message if isinstance(cause, ApplicationError) else str(cause)
            raise UsageError(message) from None
        return view

    async def approve(
        self,
        run_id: str,
        call: str | None = None,
        approver: str = "",
        args_hash: str | None = None,
    ) -> RunView:
        """Approve the pending approvals (or the one covering ``call``; with
        ``args_hash``, only while its arguments still hash to it)."""
        view = await self.status(run_id)
        answers = answering.approve(view, call, approver or "temporal", args_hash)
        return await self.decide(run_id, answers)

    async def reject(
        self,
        run_id: str,
        reason: str = "",
        call: str | None = None,
        approver: str = "",
        args_hash: str | None = None,
    ) -> RunView:
        """Refuse the pending approvals (or the one covering ``call``); the model is told."""
        view = await self.status(run_id)
        answers = answering.reject(view, reason, call, approver or "temporal", args_hash)
        return await self.decide(run_id, answers)

    async def edit(
        self,
        run_id: str,
        arguments: dict[str, Any],
        call: str | None = None,
        approver: str = "",
        args_hash: str | None = None,
    ) -> RunView:
        """Replace the arguments of the one pending approval (or of ``call``): the edited
        call is validated and authorized again, so it may pause for approval once more."""
        view = await self.status(run_id)
        answers = answering.edit(view, arguments, call, approver or "temporal", args_hash)
        return await self.decide(run_id, answers)

    async def approval(self, run_id: str, call_id: str) -> dict[str, Any]:
        """The pending approval request of ``call_id`` with every argument in full (a
        status carries long arguments as their size and hash only)."""
        return await self.look(run_id, "approval", call_id=call_id)

    async def answer(self, run_id: str, text: str) -> RunView:
        """Give ``text`` as the answer to every question the run asks (``ask_user``)."""
        view = await self.status(run_id)
        return await self.decide(run_id, answering.reply(view, text))

    async def look(self, run_id: str, what: str, **args: Any) -> dict[str, Any]:
        """Have a worker read the run's records (``what``: ``trace``, ``events``,
        ``replay``) or settle a call's unknown outcome (``reconcile``)."""
        view = await self.status(run_id)
        if view.spec is None:
            raise UsageError(f"run {run_id!r} has no spec on Temporal")
        look_id = f"{run_id}.look-{uuid.uuid4().hex[:12]}"
        answer: dict[str, Any] = await self.client.execute_workflow(
            ExecgraphLook.run,
            Look(view.spec, what, args),
            id=look_id,
            task_queue=self.task_queue,
            execution_timeout=Timing.look,
        )
        return answer

    async def list(self) -> list[RunRow]:
        """Every run of this task queue, oldest first (Temporal's visibility lists them;
        a running run's status is its workflow's answer, an ended one's its result)."""
        rows: list[RunRow] = []
        queue = self.task_queue.replace("\\", "\\\\").replace("'", "\\'")
        query = f"WorkflowType = 'execgraph.run' AND TaskQueue = '{queue}'"
        async for execution in self.client.list_workflows(query):
            memo = await execution.memo()
            started = execution.start_time.timestamp() if execution.start_time else 0.0
            status = await self._listed_status(execution.id, execution.status)
            arch, model = str(memo.get("arch", "?")), str(memo.get("model", "?"))
            rows.append(RunRow(execution.id, arch, model, started, status))
        return sorted(rows, key=lambda r: (r.created, r.run_id))

    async def _listed_status(self, run_id: str, status: WorkflowExecutionStatus | None) -> str:
        if status in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CANCELED):
            return (await self.status(run_id)).status
        if status == WorkflowExecutionStatus.COMPLETED:
            return (await self.result(run_id)).status
        if status in _ENDED_OUTSIDE:
            return TERMINATED
        return status.name if status is not None else "UNKNOWN"

    async def cancel(self, run_id: str) -> None:
        """Cancel the run: a running tool sees it within a poll; the run ends CANCELLED."""
        await self._handle(run_id).cancel()

    async def result(self, run_id: str) -> Reached:
        """Wait for the run to end and return where it ended (a cancelled run's workflow
        ends Canceled, a terminated one without a result: their status says where)."""
        try:
            reached: Reached = await self._handle(run_id).result()
        except WorkflowFailureError:
            view = await self.status(run_id)
            return Reached(status=view.status, output=view.output, error=view.error)
        return reached
