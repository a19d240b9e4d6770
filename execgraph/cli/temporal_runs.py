"""The ``--engine temporal`` side of the command line: runs as workflows on Temporal.

``run``/``demo`` start a workflow from a :class:`~execgraph.temporal.RunSpec` (names
only, so any worker rebuilds the graph); ``approve``/``reject`` answer it through the
workflow's ``decide`` update; ``cancel`` is Temporal's cancellation; ``status`` its query.
Every command then *follows* the run by polling that query, so a person may approve from
another process or machine than the one that started it; the run itself is held by the
workers, never by this process, and goes on when this process stops following it.

What is printed matches the embedded engine's lines and exit codes (3 WAITING with the
exact command that continues, 5 CANCELLED, ...), from what the workflow reports: status,
pending approvals, output, error. A server that cannot be reached, a run id Temporal does
not know, or a task queue no worker polls is one line of bad input, never a traceback.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text

from execgraph.cli.drive import out
from execgraph.cli.options import DEFAULT_NAMESPACE, exit_without_teardown
from execgraph.cli.render import STATUS_STYLE, interrupt_summary, render_final
from execgraph.cli.runs import CliError, exit_code
from execgraph.state.errors import UsageError

if TYPE_CHECKING:  # imported when used: the CLI starts without temporalio loaded
    from execgraph.temporal.client import TemporalRuns
    from execgraph.temporal.messages import Reached, RunSpec, RunView

__all__ = [
    "Temporal",
    "answer_run",
    "cancel_run",
    "engine_target",
    "reachable",
    "show_status",
    "start_run",
]

_T = TypeVar("_T")

FOLLOW_S = 3600.0
"""How long one command follows a run before it leaves it to the workers (exit 1, with
the command that looks again); the run itself is not bounded by this."""
ANSWER_S = 30.0
"""How long a query or update may wait for a worker to answer it: longer means no worker
polls the task queue (or none is alive), which is reported, not waited on forever."""
_POLL_S = (0.05, 1.0)  # first and longest pause between two status queries


@dataclass(frozen=True)
class Temporal:
    """Where the runs live: a Temporal server, a task queue its workers poll, a namespace."""

    address: str
    task_queue: str
    namespace: str = DEFAULT_NAMESPACE

    def flags(self) -> str:
        """What a printed follow-up command needs to reach the same runs."""
        parts = ["--engine", "temporal", "--address", self.address]
        parts += ["--task-queue", self.task_queue]
        if self.namespace != DEFAULT_NAMESPACE:
            parts += ["--namespace", self.namespace]
        return " " + " ".join(shlex.quote(p) for p in parts)


# --------------------------------------------------------------------------- commands


def start_run(where: Temporal, spec: RunSpec, *, auto_approve: bool) -> int:
    """``execgraph run/demo --engine temporal``: start ``spec`` and follow it."""

    async def go(runs: TemporalRuns) -> int:
        await runs.start(spec)
        out.print(
            Text(f"run {spec.run_id}", style="bold"),
            Text(
                f"· arch {spec.arch} · model {spec.model} · engine temporal · task queue "
                f"{where.task_queue} on {where.address}",
                style="dim",
            ),
            soft_wrap=True,
        )
        if auto_approve:
            out.print(Text("--auto-approve: every approval request will be approved", "cyan"))
        return await _follow(runs, where, spec.run_id, auto_approve=auto_approve)

    return _run(where, go)


def answer_run(
    where: Temporal,
    run_id: str,
    action: str,
    *,
    call: str | None = None,
    reason: str = "",
    arguments: dict[str, Any] | None = None,
) -> int:
    """``execgraph approve/reject/edit --engine temporal``: answer the pending approvals
    (edit: the one, or ``call``'s), then follow the run."""

    async def go(runs: TemporalRuns) -> int:
        view = await _ask(where, runs.status(run_id))
        chosen = _approvals(view, call)
        if action == "approve":
            await _ask(where, runs.approve(run_id, call=call, approver="cli"))
        elif action == "edit":
            await _ask(where, runs.edit(run_id, arguments or {}, call=call, approver="cli"))
        else:
            await _ask(where, runs.reject(run_id, reason=reason, call=call, approver="cli"))
        verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}[action]
        for item in chosen:
            out.print(Text(f"{verb}: {interrupt_summary(item['value'])}", "cyan"), soft_wrap=True)
        return await _follow(runs, where, run_id, auto_approve=False, answered=_pending(view))

    return _run(where, go)


def answer_question(where: Temporal, run_id: str, text: str) -> int:
    """``execgraph resume RUN --answer TEXT --engine temporal``: answer its questions."""

    async def go(runs: TemporalRuns) -> int:
        view = await _ask(where, runs.status(run_id))
        await _ask(where, runs.answer(run_id, text))
        out.print(Text(f"answered: {text}", "cyan"), soft_wrap=True)
        return await _follow(runs, where, run_id, auto_approve=False, answered=_pending(view))

    return _run(where, go)


def cancel_run(where: Temporal, run_id: str) -> int:
    """``execgraph cancel --engine temporal``: cancel the workflow, wait for its end."""

    async def go(runs: TemporalRuns) -> int:
        view = await _ask(where, runs.status(run_id))
        if _ended(view):
            out.print(
                Text(f"run {run_id} already ended: ")
                + Text(view.status, STATUS_STYLE.get(view.status, ""))
            )
            return exit_code(view.status)
        await runs.cancel(run_id)
        out.print(Text(f"cancel requested; the workers end run {run_id}", style="bold"))
        for item in view.interrupts:
            shown = f"cancelled, not run: {interrupt_summary(item['value'])}"
            out.print(Text(shown, style=STATUS_STYLE["CANCELLED"]), soft_wrap=True)
        try:
            reached = await asyncio.wait_for(runs.result(run_id), FOLLOW_S)
        except TimeoutError:
            return _left(where, run_id)
        _final(reached)
        return exit_code(reached.status)

    return _run(where, go)


def show_status(where: Temporal, run_id: str) -> int:
    """``execgraph status --engine temporal``: the workflow's own view of the run."""

    async def go(runs: TemporalRuns) -> int:
        view = await _ask(where, runs.status(run_id))
        out.print(
            Text(f"run {run_id}", style="bold"),
            Text(f"· engine temporal · task queue {where.task_queue} on {where.address}"),
            soft_wrap=True,
        )
        out.print(
            Text("status: ", style="bold") + Text(view.status, STATUS_STYLE.get(view.status, ""))
        )
        out.print(Text(f"advances: {view.advances}", style="dim"))
        if view.output:
            out.print(Text("output: ", style="bold") + Text(view.output), soft_wrap=True)
        if view.error and view.status != "COMPLETED":
            out.print(Text(f"error: {view.error}", style="red"), soft_wrap=True)
        for item in view.interrupts:
            line = f"  waiting for {interrupt_summary(item['value'])}"
            out.print(Text(line, style="yellow"), soft_wrap=True)
        values = [i["value"] for i in view.interrupts]
        for command in _follow_ups(where, run_id, values) if values else []:
            out.print(Text(f"  {command}", style="cyan"), soft_wrap=True)
        return 0

    return _run(where, go)


# --------------------------------------------------------------------------- following


async def _follow(
    runs: TemporalRuns,
    where: Temporal,
    run_id: str,
    *,
    auto_approve: bool,
    answered: frozenset[str] = frozenset(),
) -> int:
    """Poll the run until it ends or waits for a person; answer it under --auto-approve.

    ``answered`` are the pending interrupt ids when this process last answered: until the
    next advance reports, the workflow still shows that pause, which is not a new one.
    """
    deadline = time.monotonic() + FOLLOW_S
    pause, shown = _POLL_S[0], ""
    while time.monotonic() < deadline:
        view = await _ask(where, runs.status(run_id))
        waiting = bool(view.interrupts) and _pending(view) != answered
        if view.status != shown and (waiting or view.status not in ("WAITING",)):
            shown = view.status
            out.print(_progress(view), soft_wrap=True)
        if _ended(view):
            _final(view)
            return exit_code(view.status)
        if waiting and auto_approve and _approvals(view, None) == view.interrupts:
            for item in view.interrupts:
                out.print(Text(f"auto-approved: {interrupt_summary(item['value'])}", "cyan"))
            await _ask(where, runs.approve(run_id, approver="cli --auto-approve"))
            answered, shown, pause = _pending(view), "", _POLL_S[0]
            continue
        if waiting:
            _waiting(where, run_id, [i["value"] for i in view.interrupts])
            return exit_code("WAITING")
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL_S[1])
    return _left(where, run_id)


def _pending(view: RunView) -> frozenset[str]:
    return frozenset(str(i["id"]) for i in view.interrupts)


def _ended(view: RunView) -> bool:
    from execgraph.temporal.messages import TERMINAL

    return view.status in TERMINAL and not view.interrupts


def _approvals(view: RunView, call: str | None) -> list[dict[str, Any]]:
    """The pending approvals (of ``call``, when given)."""
    return [
        i
        for i in view.interrupts
        if i["value"].get("kind") == "approval"
        and (call is None or i["value"].get("call_id") == call)
    ]


def _progress(view: RunView) -> Text:
    text = Text(f"  {'temporal':<12} ", style="dim")
    text.append("status ", style="dim")
    text.append(view.status, style=STATUS_STYLE.get(view.status, ""))
    return text.append(f" (advance {view.advances})", style="dim")


def _final(view: RunView | Reached) -> None:
    values: dict[str, Any] = {"status": view.status, "output": view.output}
    if view.error:
        values["error"] = {"message": view.error}
    render_final(out, values, Path())


def _follow_ups(where: Temporal, run_id: str, values: list[Mapping[str, Any]]) -> list[str]:
    flags = where.flags()
    if any(v.get("kind") == "question" for v in values):
        return [
            f"execgraph resume {run_id} --answer '...'{flags}",
            f"execgraph cancel {run_id}{flags}",
        ]
    return [
        f"execgraph approve {run_id}{flags}",
        f"execgraph reject {run_id}{flags}",
        f"execgraph edit {run_id} --args '{{...}}'{flags}",
        f"execgraph cancel {run_id}{flags}",
    ]


def _waiting(where: Temporal, run_id: str, values: list[Mapping[str, Any]]) -> None:
    """A paused run: what waits (approvals, questions), and the commands that continue it."""
    out.print()
    out.print(Text("status: ", style="bold") + Text("WAITING", STATUS_STYLE["WAITING"]))
    out.print(Text(f"run id: {run_id}"))
    out.print(Text("waiting for:", style="bold"))
    for value in values:
        reason = value.get("reason")
        line = f"  - {interrupt_summary(value)}" + (f" — {reason}" if reason else "")
        out.print(Text(line, style="yellow"), soft_wrap=True)
    out.print(Text("continue with:", style="bold"))
    for command in _follow_ups(where, run_id, values):
        out.print(Text(f"  {command}", style="cyan"), soft_wrap=True)


def _left(where: Temporal, run_id: str) -> int:
    out.print(
        Text(
            f"run {run_id} is still running on the workers; look again with: "
            f"execgraph status {run_id}{where.flags()}"
        ),
        soft_wrap=True,
    )
    return 1


# --------------------------------------------------------------------------- plumbing


def _run(where: Temporal, go: Callable[[TemporalRuns], Coroutine[Any, Any, int]]) -> int:
    """Connect, run ``go(runs)``; Temporal's failures become one-line CliErrors.

    The error is raised only after ``asyncio.run`` returned and built fresh (no traceback
    holding the client): a Temporal client freed while Python shuts down aborts it.
    """

    reachable(where.address)
    exit_without_teardown()

    async def main() -> int | CliError:
        from execgraph.temporal import TemporalRuns

        try:
            runs = await TemporalRuns.connect(
                where.address, task_queue=where.task_queue, namespace=where.namespace
            )
        except RuntimeError as exc:  # the SDK's "Failed client connect: ..."
            return CliError(f"cannot reach the Temporal server at {where.address}: {exc}")
        try:
            return await go(runs)
        except UsageError as exc:
            return CliError(str(exc), code=getattr(exc, "code", 2))
        except Exception as exc:
            found = _translated(where, exc)
            if found is None:
                raise
            return found

    outcome = asyncio.run(main())
    if isinstance(outcome, CliError):
        raise outcome
    return outcome


def reachable(address: str) -> None:
    """A CliError unless something listens at ``address`` (HOST:PORT).

    Checked with a plain socket before the SDK connects: a failed SDK connect leaves
    threads behind that can crash the interpreter as it exits (seen with temporalio 1.x).
    """
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise CliError(f"--address {address!r} is not HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CliError(f"cannot reach the Temporal server at {address}: {reason}") from None


def _translated(where: Temporal, exc: Exception) -> CliError | None:
    """Temporal's refusals as the CLI's bad input (None: an internal error)."""
    from temporalio.exceptions import WorkflowAlreadyStartedError
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(exc, WorkflowAlreadyStartedError):
        return CliError(
            f"run {exc.workflow_id!r} already exists on Temporal (a run id is used once); "
            f"give another --run-id"
        )
    if isinstance(exc, RPCError) and "namespace" in exc.message.lower():
        return CliError(
            f"Temporal at {where.address} refused namespace {where.namespace!r}: {exc.message}"
        )
    if isinstance(exc, RPCError) and exc.status == RPCStatusCode.NOT_FOUND:
        return CliError(f"Temporal knows no such run: {exc.message}")
    if isinstance(exc, RPCError):
        return CliError(f"Temporal refused: {exc.message}")
    return None


async def _ask(where: Temporal, call: Awaitable[_T]) -> _T:
    """A query or update, bounded: one no worker answers is reported, not waited on."""
    try:
        return await asyncio.wait_for(call, ANSWER_S)
    except TimeoutError:
        raise CliError(
            f"no worker answered within {ANSWER_S:g} s on task queue {where.task_queue!r} "
            f"at {where.address}; start one with: execgraph worker --task-queue "
            f"{shlex.quote(where.task_queue)} --address {where.address}",
            code=1,
        ) from None


def engine_target(engine: str, address: str, task_queue: str, namespace: str) -> Temporal | None:
    """``--engine``: None for the embedded engine, else where the Temporal runs live."""
    if engine == "embedded":
        return None
    if engine != "temporal":
        raise CliError(f"unknown engine {engine!r}; choose embedded or temporal")
    return Temporal(address, task_queue, namespace)
