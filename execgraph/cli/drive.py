"""Driving a run from the CLI: stream it, answer what can be answered, report where it stands.

One process may answer many interrupts (auto-approve, prompts); a run that needs a person
who is not there stops WAITING with the commands that continue it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langgraph.types import Command
from rich.console import Console
from rich.text import Text

from execgraph.cli.live import LiveOutput
from execgraph.cli.prompts import automatic_answer, prompt_answer
from execgraph.cli.render import (
    interrupt_summary,
    progress_lines,
    render_final,
    render_waiting,
)
from execgraph.cli.run_owner import owned
from execgraph.cli.runs import Answerer, Session, exit_code
from execgraph.state.home import default_home

__all__ = ["answers_for", "drive", "out", "report", "suffix"]

out = Console(highlight=False)

_MAX_ROUNDS = 100  # interrupts answered in one process before giving up (a loop guard)


def suffix(home: Path) -> str:
    """What a printed follow-up command needs to find this home again."""
    default = default_home().expanduser().resolve()
    return "" if home == default else f" --home {home}"


# --------------------------------------------------------------------------- answers


def answers_for(interrupts: Sequence[Any], answerer: Answerer) -> dict[str, Any] | None:
    """Answers for every pending interrupt, or None when the run must stay WAITING."""
    answers: dict[str, Any] = {}
    for item in interrupts:
        answer = automatic_answer(item.value, answerer)
        if answer is None and answerer == "ask":
            answer = prompt_answer(out, item.value)
        if answer is None:
            return None
        if answerer in ("approve", "reject"):
            verb = "auto-approved" if answerer == "approve" else "rejected (cancel)"
            out.print(Text(f"{verb}: {interrupt_summary(item.value)}", style="cyan"))
        answers[item.id] = answer
    return answers


# --------------------------------------------------------------------------- driving


def _stream(session: Session, inp: Any) -> None:
    # Top-level updates only: one progress line per run-graph node, not per executor stage.
    # Custom chunks come while a node still runs: a tool's output and which call is
    # running for how long (LiveOutput), so a long call shows before its node ends.
    live = LiveOutput(out)
    modes = ["updates", "custom"]
    try:
        for mode, chunk in session.graph.stream(inp, session.config, stream_mode=modes):
            if mode == "custom":
                live.add(chunk)
                continue
            for node, update in chunk.items():
                if isinstance(update, Mapping) and isinstance(update.get("results"), Mapping):
                    live.finish(update["results"])  # their output ends before their result
                for line in progress_lines(node, update):
                    out.print(line, soft_wrap=True)
    finally:
        live.finish()


def drive(session: Session, inp: Any) -> int:
    """Stream the run to its next unanswerable pause or its end; returns the exit code."""
    with owned(session.home, session.meta.run_id):
        for _ in range(_MAX_ROUNDS):
            _stream(session, inp)
            interrupts = session.graph.get_state(session.config).interrupts
            answers = answers_for(interrupts, session.answerer) if interrupts else None
            if answers is None:
                break
            inp = Command(resume=answers)
    return report(session)


def report(session: Session) -> int:
    """Print where the run stands; the exit code follows the status."""
    state = session.graph.get_state(session.config)
    run_id = session.meta.run_id
    if state.interrupts:
        render_waiting(out, run_id, [i.value for i in state.interrupts], suffix(session.home))
        return exit_code("WAITING")
    status = state.values.get("status")
    render_final(out, state.values, Path(session.meta.workspace))
    if status in (None, "RUNNING", "WAITING"):
        out.print(Text(f"the run has not finished; continue with: execgraph resume {run_id}"))
        return 1
    return exit_code(status)
