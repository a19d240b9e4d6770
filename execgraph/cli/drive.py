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

from execgraph.cli.live import LiveOutput
from execgraph.cli.options import exit_code
from execgraph.cli.render import (
    STATUS_STYLE,
    interrupt_summary,
    progress_lines,
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
            out.print(Text(f"resuming run {chunk.run_id}", style="bold"))
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
            text.append(chunk.status, style=STATUS_STYLE.get(chunk.status, ""))
            out.print(text.append(f" (advance {chunk.advances})", style="dim"), soft_wrap=True)

    def _started(self, view: RunView) -> None:
        spec = view.spec
        assert spec is not None
        where = f"workspace {view.workspace}" if view.workspace else "engine temporal"
        out.print(
            Text(f"run {view.run_id}", style="bold"),
            Text(f"· arch {spec.arch} · model {spec.model} · {where}", style="dim"),
            soft_wrap=True,
        )
        if self.auto_approve:
            out.print(Text("--auto-approve: every approval request will be approved", "cyan"))

    def done(self) -> None:
        """Flush what a tool printed without a final newline."""
        self.live.finish()


def answerer(who: Who) -> Answerer | None:
    """Answers for every pause ``who`` can answer (None: nobody answers here)."""
    if who == "stop":
        return None

    def answer(view: RunView) -> dict[str, Any] | None:
        from execgraph.cli.prompts import prompt_answer

        answers: dict[str, Any] = {}
        for item in view.interrupts:
            value = item["value"]
            if who == "approve":
                if value.get("kind") != "approval":
                    return None  # a question (or a batch) waits for a person
                answers[item["id"]] = {"action": "approve", "approver": "auto-approve"}
                out.print(Text(f"auto-approved: {interrupt_summary(value)}", style="cyan"))
                continue
            found = prompt_answer(out, value)
            if found is None:
                return None
            answers[item["id"]] = found
        return answers

    return answer


def report(runs: Runs, view: RunView) -> int:
    """Print where the run stands; the exit code follows the status."""
    if view.waiting:
        render_waiting(out, view.run_id, [i["value"] for i in view.interrupts], runs.flags)
        return exit_code("WAITING")
    values = view.values if view.values is not None else _plain(view)
    render_final(out, values, Path(view.workspace) if view.workspace else None)
    if not view.ended:
        out.print(
            Text(
                f"the run has not finished; continue with: execgraph resume "
                f"{view.run_id}{runs.flags}"
                if view.values is not None
                else f"run {view.run_id} is still running on the workers; look again with: "
                f"execgraph status {view.run_id}{runs.flags}"
            ),
            soft_wrap=True,
        )
        return 1
    return exit_code(view.status)


def _plain(view: RunView) -> dict[str, Any]:
    values: dict[str, Any] = {"status": view.status, "output": view.output}
    if view.error:
        values["error"] = {"message": view.error}
    return values
