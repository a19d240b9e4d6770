"""Drive runs on Temporal from anywhere: start, answer, cancel, read, wait.

Every method goes through the run's workflow (workflow id = run id), so a person can
approve from another process or machine than the one that started the run. Answers are
an update, checked by the workflow against the pending interrupts before they are taken;
a cancel is Temporal's own cancellation, which reaches the running tool. A look at a
run's records (its trace, a replay) is a short workflow a worker answers.
"""

from __future__ import annotations

import uuid
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from execgraph.engines import answers as answering
from execgraph.engines.runs import RunRow
from execgraph.engines.temporal.messages import Decision, Look, Reached, RunSpec, RunView
from execgraph.engines.temporal.workflow import ExecgraphLook, ExecgraphRun, Timing
from execgraph.state.errors import UsageError
from execgraph.state.home import check_run_id

__all__ = ["TemporalRuns"]


class TemporalRuns:
    """Runs on one Temporal namespace and task queue.

    >>> runs = await TemporalRuns.connect("127.0.0.1:7233", task_queue="execgraph")
    >>> await runs.start(RunSpec("run-1", task={"goal": "..."}))
    >>> await runs.approve("run-1")
    >>> (await runs.result("run-1")).status
    'COMPLETED'
    """

    def __init__(self, client: Client, task_queue: str, heartbeat_s: float = 0.0) -> None:
        self.client = client
        self.task_queue = task_queue
        self.heartbeat_s = heartbeat_s

    @classmethod
    async def connect(
        cls,
        address: str = "127.0.0.1:7233",
        *,
        task_queue: str,
        namespace: str = "default",
        heartbeat_s: float = 0.0,
    ) -> TemporalRuns:
        """Connect to the Temporal server at ``address``."""
        return cls(await Client.connect(address, namespace=namespace), task_queue, heartbeat_s)

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
        """Where the run is (the workflow's query; answered by a worker)."""
        view: RunView = await self._handle(run_id).query(ExecgraphRun.status)
        return view

    async def decide(self, run_id: str, answers: dict[str, Any]) -> RunView:
        """Answer pending interrupts (interrupt id → resume value, as the embedded engine
        takes it); refused with a UsageError when they are not what the run waits for."""
        try:
            view: RunView = await self._handle(run_id).execute_update(
                ExecgraphRun.decide, Decision(answers)
            )
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            message = cause.message if isinstance(cause, ApplicationError) else str(cause)
            raise UsageError(message) from None
        return view

    async def approve(self, run_id: str, call: str | None = None, approver: str = "") -> RunView:
        """Approve the pending approvals (or the one covering ``call``)."""
        view = await self.status(run_id)
        return await self.decide(run_id, answering.approve(view, call, approver or "temporal"))

    async def reject(
        self, run_id: str, reason: str = "", call: str | None = None, approver: str = ""
    ) -> RunView:
        """Refuse the pending approvals (or the one covering ``call``); the model is told."""
        view = await self.status(run_id)
        answers = answering.reject(view, reason, call, approver or "temporal")
        return await self.decide(run_id, answers)

    async def edit(
        self, run_id: str, arguments: dict[str, Any], call: str | None = None, approver: str = ""
    ) -> RunView:
        """Replace the arguments of the one pending approval (or of ``call``): the edited
        call is validated and authorized again, so it may pause for approval once more."""
        view = await self.status(run_id)
        answers = answering.edit(view, arguments, call, approver or "temporal")
        return await self.decide(run_id, answers)

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
        """Every run on this namespace, oldest first (Temporal's visibility lists them;
        a running run's status is its workflow's answer, an ended one's its result)."""
        rows: list[RunRow] = []
        async for execution in self.client.list_workflows("WorkflowType = 'execgraph.run'"):
            memo = await execution.memo()
            started = execution.start_time.timestamp() if execution.start_time else 0.0
            status = await self._listed_status(execution.id, execution.status)
            arch, model = str(memo.get("arch", "?")), str(memo.get("model", "?"))
            rows.append(RunRow(execution.id, arch, model, started, status))
        return sorted(rows, key=lambda r: (r.created, r.run_id))

    async def _listed_status(self, run_id: str, status: WorkflowExecutionStatus | None) -> str:
        if status == WorkflowExecutionStatus.RUNNING:
            return (await self.status(run_id)).status
        if status == WorkflowExecutionStatus.COMPLETED:
            return (await self.result(run_id)).status
        return status.name if status is not None else "UNKNOWN"

    async def cancel(self, run_id: str) -> None:
        """Cancel the run: a running tool sees it within a poll; the run ends CANCELLED."""
        await self._handle(run_id).cancel()

    async def result(self, run_id: str) -> Reached:
        """Wait for the run to end and return where it ended."""
        reached: Reached = await self._handle(run_id).result()
        return reached
