"""What a command prints while a run advances, who answers its pauses, where it ended.

The engine advances the run; this module only watches it (progress lines, a running
tool's output, a Temporal run's status changes), answers its pauses the way the command
was told to (a person at a prompt, ``--auto-approve``, nobody), and prints where it
stopped with the exit code that goes with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.text import Text

from execgraph.cli.approvals import interrupt_summary
from execgraph.cli.inert import short
from execgraph.cli.live import LiveOutput
from execgraph.cli.options import err, exit_code
from execgraph.cli.render import (
    STATUS_STYLE,
    progress_lines,
    raised_text,
    render_final,
    render_waiting,
)
from execgraph.engines.runs import Answerer, Runs
from execgraph.engines.spec import RunView

__all__ = ["Watcher", "Who", "answerer", "out", "report"]

out = Console(highlight=False)

Who = Literal["ask", "approve", "stop"]
"""Who answers a run's pauses: a person at a prompt, auto-approve, nobody."""


class Watcher:
    """Prints a run as it advances: its start, node updates, tools' live output, and a
    Temporal run's new statuses."""

    def __init__(self, *, auto_approve: bool = False) -> None:
        self.live = LiveOutput(out)
        self.auto_approve = auto_approve

    def __call__(self, mode: str, chunk: Any) -> None:
        if mode == "started":
            self._started(chunk)
        elif mode == "resuming":
            out.print(Text(f"resuming run {short(chunk.run_id, 200)}", style="bold"))
        elif mode == "custom":
            self.live.add(chunk)
        elif mode == "updates":
            for node, update in chunk.items():
                if isinstance(update, Mapping) and isinstance(update.get("results"), Mapping):
                    self.live.finish(update["results"])  # their output ends before their result
                for line in progress_lines(node, update):
                    out.print(line, soft_wrap=True)
        elif mode == "status":
            text = Text(f"  {'temporal':<12} ", style="dim").append("status ", style="dim")
            status = short(chunk.status, 40)
            text.append(status, style=STATUS_STYLE.get(status, ""))
            out.print(text.append(f" (advance {chunk.advances})", style="dim"), soft_wrap=True)

    def _started(self, view: RunView) -> None:
        spec = view.spec
        assert spec is not None
        where = f"workspace {short(view.workspace, 300)}" if view.workspace else "engine temporal"
        about = f"· arch {short(spec.arch, 40)} · model {short(spec.model, 80)} · {where}"
        out.print(
            Text(f"run {short(view.run_id, 200)}", style="bold"),
            Text(about, style="dim"),
            soft_wrap=True,
        )
        if self.auto_approve:
            out.print(Text("--auto-approve: every approval request will be approved", "cyan"))

    def done(self) -> None:
        """Flush what a tool printed without a final newline."""
        self.live.finish()


def answerer(who: Who, flags: str = "") -> Answerer | None:
    """Answers for every pause ``who`` can answer (None: nobody answers here), each bound
    to the call as it was shown; ``flags`` reach the run again in printed commands."""
    if who == "stop":
        return None

    def answer(view: RunView) -> dict[str, Any] | None:
        from execgraph.cli.prompts import prompt_answer
        from execgraph.engines.answers import bound_to

        answers: dict[str, Any] = {}
        for item in view.interrupts:
            value = item["value"]
            if who == "approve":
                if value.get("kind") != "approval":
                    return None  # a question (or a batch) waits for a person
                approved = {"action": "approve", "approver": "auto-approve"}
                answers[item["id"]] = bound_to(value, approved)  # what is printed next
                shown = f"auto-approved: {interrupt_summary(value, flags)}"
                out.print(Text(shown, style="cyan"), soft_wrap=True)
                continue
            found = prompt_answer(out, value)
            if found is None:
                return None
            answers[item["id"]] = bound_to(value, found)  # what the person was shown
        return answers

    return answer


def report(runs: Runs, view: RunView) -> int:
    """Print where the run stands; the exit code follows the status."""
    if view.waiting:
        render_waiting(out, view.run_id, view.interrupts, runs.flags)
        return exit_code("WAITING")
    values = view.values if view.values is not None else _plain(view)
    render_final(out, values, Path(view.workspace) if view.workspace else None)
    _bug_traceback(runs, view, values)
    if not view.ended:
        out.print(
            Text(
                f"the run has not finished; continue with: execgraph resume "
                f"{short(view.run_id, 200)}{runs.flags}"
                if view.values is not None
                else f"run {short(view.run_id, 200)} is still running on the workers; look "
                f"again with: execgraph status {short(view.run_id, 200)}{runs.flags}"
            ),
            soft_wrap=True,
        )
        return 1
    return exit_code(view.status)


BUG_PREFIX = "tool bug: "
"""How the reason of a run a tool's bug stopped begins (``state.errors.tool_bugs``)."""


def _bug_traceback(runs: Runs, view: RunView, values: Mapping[str, Any]) -> None:
    """A run a tool's bug stopped: the tool's traceback on stderr, as Python prints an
    uncaught exception, so the developer sees it without asking for logs.

    The traceback is the call's ``tool.raised`` event (bounded and scrubbed by the
    executor), made inert: what the tool raised quotes data it read.
    """
    reason = str((values.get("error") or {}).get("message") or view.error or "")
    if view.status != "FAILED" or not reason.startswith(BUG_PREFIX):
        return
    raised = [e for e in runs.events(view.run_id) if str(e.type) == "tool.raised"]
    bug = [e for e in raised if e.call_id and f" in call {e.call_id};" in reason]
    for event in bug or raised[-1:]:
        tool = (event.payload or {}).get("tool", "")
        head = f"{tool} raised in call {event.call_id}:"
        err.print(Text(short(head, 300), style="red"), soft_wrap=True)
        err.print(Text(raised_text(event.payload or {})), soft_wrap=True)


def _plain(view: RunView) -> dict[str, Any]:
    values: dict[str, Any] = {"status": view.status, "output": view.output}
    if view.error:
        values["error"] = {"message": view.error}
    return values
