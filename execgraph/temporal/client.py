"""Drive runs on Temporal from anywhere: start, answer, cancel, read, wait.

Every method goes through the run's workflow (workflow id = run id), so a person can
approve from another process or machine than the one that started the run. Answers are
an update, checked by the workflow against the pending interrupts before they are taken;
a cancel is Temporal's own cancellation, which reaches the running tool.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from execgraph.state.errors import UsageError
from execgraph.temporal.messages import Decision, Reached, RunSpec, RunView
from execgraph.temporal.workflow import ExecgraphRun

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
        """Start ``spec`` as a workflow; a run id already used is refused (UsageError)."""
        try:
            await self.client.start_workflow(
                ExecgraphRun.run,
                args=[spec, self.heartbeat_s],
                id=spec.run_id,
                task_queue=self.task_queue,
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
        answer = {"action": "approve", "approver": approver or "temporal"}
        return await self.decide(run_id, await self._answer_all(run_id, call, answer))

    async def reject(
        self, run_id: str, reason: str = "", call: str | None = None, approver: str = ""
    ) -> RunView:
        """Refuse the pending approvals (or the one covering ``call``); the model is told."""
        answer = {"action": "reject", "reason": reason, "approver": approver or "temporal"}
        return await self.decide(run_id, await self._answer_all(run_id, call, answer))

    async def edit(
        self, run_id: str, arguments: dict[str, Any], call: str | None = None, approver: str = ""
    ) -> RunView:
        """Replace the arguments of the one pending approval (or of ``call``): the edited
        call is validated and authorized again, so it may pause for approval once more."""
        answer = {"action": "edit", "arguments": arguments, "approver": approver or "temporal"}
        answers = await self._answer_all(run_id, call, answer)
        if len(answers) != 1:
            raise UsageError(
                f"run {run_id!r} has {len(answers)} pending approvals; name one with call="
            )
        return await self.decide(run_id, answers)

    async def answer(self, run_id: str, text: str) -> RunView:
        """Give ``text`` as the answer to every question the run asks (``ask_user``)."""
        view = await self.status(run_id)
        questions = [i for i in view.interrupts if i["value"].get("kind") == "question"]
        if not questions:
            raise UsageError(f"run {run_id!r} has no pending question ({view.status})")
        return await self.decide(run_id, {str(i["id"]): {"answer": text} for i in questions})

    async def _answer_all(
        self, run_id: str, call: str | None, answer: dict[str, Any]
    ) -> dict[str, Any]:
        view = await self.status(run_id)
        chosen = [
            i
            for i in view.interrupts
            if i["value"].get("kind") == "approval"
            and (call is None or i["value"].get("call_id") == call)
        ]
        if not chosen:
            which = f" for call {call!r}" if call else ""
            raise UsageError(f"run {run_id!r} has no pending approval{which} ({view.status})")
        return {str(i["id"]): answer for i in chosen}

    async def cancel(self, run_id: str) -> None:
        """Cancel the run: a running tool sees it within a poll; the run ends CANCELLED."""
        await self._handle(run_id).cancel()

    async def result(self, run_id: str) -> Reached:
        """Wait for the run to end and return where it ended."""
        reached: Reached = await self._handle(run_id).result()
        return reached
