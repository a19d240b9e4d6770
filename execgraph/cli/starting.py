"""Starting a run from the command line: ``execgraph run`` and ``execgraph demo``.

The task (a file, or the demo's), the tools reference and the run id are checked before
anything runs; then the run is started on Temporal (``--engine temporal``) or recorded in
the home (its metadata, so later commands rebuild the same graph) and driven here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.text import Text

from execgraph.cli.drive import drive, out
from execgraph.cli.hints import resume_line
from execgraph.cli.options import home_dir, interactive, this_run
from execgraph.cli.runs import (
    Answerer,
    CliError,
    RunMeta,
    Session,
    build_app,
    check_database,
    check_run_id,
    database_label,
    load_task,
    new_run_id,
    save_meta,
    tool_source,
)
from execgraph.cli.temporal_connection import Temporal
from execgraph.cli.temporal_runs import start_run
from execgraph.graph.build import ARCHITECTURES

__all__ = ["offline_note", "start"]


def start(
    task_file: Path | None,
    arch: str,
    model: str,
    home: Path | None,
    run_id: str | None,
    auto_approve: bool,
    no_input: bool,
    tools: str | None,
    where: Temporal | None = None,
    database: str | None = None,
) -> int:
    """Check the inputs, then start the run on ``where`` (Temporal) or drive it here."""
    base = home_dir(home)
    check_database(database)
    if arch not in ARCHITECTURES:
        raise CliError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    if tools is not None:
        tool_source(tools)  # a bad --tools is reported before anything else
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
    rid = check_run_id(run_id) if run_id else new_run_id()
    if where is not None:
        from execgraph.temporal.messages import RunSpec

        spec = RunSpec(rid, task=task, arch=arch, model=model, tools=tools)
        return start_run(where, spec, auto_approve=auto_approve)
    if (base / "runs" / f"{rid}.json").exists():
        raise CliError(f"run {rid!r} already exists; continue it with: {resume_line(rid, base)}")
    workspace = str(base / "workspaces" / rid)
    meta = RunMeta(rid, arch, model, task, time.time(), workspace, tools, database_label(database))
    answerer: Answerer = "approve" if auto_approve else "ask" if interactive(no_input) else "stop"
    session = Session(meta, base, build_app(meta, base, database=database), answerer)
    save_meta(base, meta)
    this_run(rid, base)
    out.print(
        Text(f"run {rid}", style="bold"),
        Text(f"· arch {arch} · model {model} · workspace {workspace}", style="dim"),
        soft_wrap=True,
    )
    if auto_approve:
        out.print(Text("--auto-approve: every approval request will be approved", style="cyan"))
    if task_file is not None and model.strip().lower() == "offline":
        offline_note(task)
    return drive(session, {"task": task})


def offline_note(task: dict[str, Any]) -> None:
    """``--model offline`` plays the demo; a task of the user's own gets told so."""
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
