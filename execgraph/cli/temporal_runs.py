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
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from execgraph.cli.drive import out
from execgraph.cli.render import STATUS_STYLE, interrupt_summary, render_final
from execgraph.cli.runs import exit_code
from execgraph.cli.temporal_connection import Temporal, ask, run_on

if TYPE_CHECKING:  # imported when used: the CLI starts without temporalio loaded
    from execgraph.temporal.client import TemporalRuns
    from execgraph.temporal.messages import Reached, RunSpec, RunView

__all__ = ["answer_question", "answer_run", "cancel_run", "show_status", "start_run"]

FOLLOW_S = 3600.0
"""How long one command follows a run before it leaves it to the workers (exit 1, with
the command that looks again); the run itself is not bounded by this."""
_POLL_S = (0.05, 1.0)  # first and longest pause between two status queries


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

    return run_on(where, go)


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
        view = await ask(where, runs.status(run_id))
        chosen = _approvals(view, call)
        if action == "approve":
            await ask(where, runs.approve(run_id, call=call, approver="cli"))
        elif action == "edit":
            await ask(where, runs.edit(run_id, arguments or {}, call=call, approver="cli"))
        else:
            await ask(where, runs.reject(run_id, reason=reason, call=call, approver="cli"))
        verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}[action]
        for item in chosen:
            out.print(Text(f"{verb}: {interrupt_summary(item['value'])}", "cyan"), soft_wrap=True)
        return await _follow(runs, where, run_id, auto_approve=False, answered=_pending(view))

    return run_on(where, go)


def answer_question(where: Temporal, run_id: str, text: str) -> int:
    """``execgraph resume RUN --answer TEXT --engine temporal``: answer its questions."""

    async def go(runs: TemporalRuns) -> int:
        view = await ask(where, runs.status(run_id))
        await ask(where, runs.answer(run_id, text))
        out.print(Text(f"answered: {text}", "cyan"), soft_wrap=True)
        return await _follow(runs, where, run_id, auto_approve=False, answered=_pending(view))

    return run_on(where, go)


def cancel_run(where: Temporal, run_id: str) -> int:
    """``execgraph cancel --engine temporal``: cancel the workflow, wait for its end."""

    async def go(runs: TemporalRuns) -> int:
        view = await ask(where, runs.status(run_id))
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

    return run_on(where, go)


def show_status(where: Temporal, run_id: str) -> int:
    """``execgraph status --engine temporal``: the workflow's own view of the run."""

    async def go(runs: TemporalRuns) -> int:
        view = await ask(where, runs.status(run_id))
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

    return run_on(where, go)


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
        view = await ask(where, runs.status(run_id))
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
            await ask(where, runs.approve(run_id, approver="cli --auto-approve"))
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
