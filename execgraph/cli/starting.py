"""Starting a run from the command line: ``execgraph run`` and ``execgraph demo``.

The engine checks what it can of the run before anything else (architecture, tool set,
run id); then the task (a file, or the demo's) is read, and the run is started and
followed to its first pause no one here answers, or to its end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.cli.options import interactive, this_run
from execgraph.cli.reach import Target
from execgraph.cli.task_input import load_task, new_run_id
from execgraph.engines.spec import DEFAULT_TOOLS, RunSpec
from execgraph.state.errors import CliError

__all__ = ["offline_note", "start"]


def start(
    target: Target,
    task_file: Path | None,
    arch: str,
    model: str,
    run_id: str | None,
    auto_approve: bool,
    no_input: bool,
    tools: str | None,
) -> int:
    """Check the inputs, then start the run and follow it; the exit code of where it
    stopped."""
    from execgraph.cli.drive import Watcher, Who, answerer, report

    watch = Watcher(auto_approve=auto_approve)
    runs = target.runs(watch)
    rid = run_id or new_run_id()
    runs.check(RunSpec(rid, {}, arch, model, tools or DEFAULT_TOOLS))
    if task_file is not None:
        task = load_task(task_file)
    elif tools is not None:
        raise CliError(
            "a run with your own --tools needs a TASK file (a TaskSpec as JSON: goal, "
            "success_checks, budgets); the default task is the demo's"
        )
    else:
        from execgraph.demo.build import demo_task

        task = demo_task()
    if task_file is not None and model.strip().lower() == "offline":
        offline_note(task)
    this_run(rid, runs.flags)
    who: Who = "approve" if auto_approve else "ask" if interactive(no_input) else "stop"
    view = runs.start(
        RunSpec(rid, task, arch, model, tools or DEFAULT_TOOLS), answerer=answerer(who, runs.flags)
    )
    watch.done()
    return report(runs, view)


def offline_note(task: dict[str, Any]) -> None:
    """``--model offline`` plays the demo; a task of the user's own gets told so."""
    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.demo.build import demo_task

    if task.get("goal") != demo_task()["goal"]:
        out.print(
            Text(
                "note: --model offline is the demo's scripted policy: it can only run the "
                "demo (search the corpus, read, draft report.md, publish), whatever the "
                "task's goal says; give --model provider:model (e.g. openai:gpt-4o-mini) "
                "to run your own task",
                style="yellow",
            ),
            soft_wrap=True,
        )
