"""``execgraph eval``: the suite x architectures x ablations x seeds, with a progress bar.

Writes ``eval.json`` (what the notebook reads), ``eval.md`` (the tables) and the plots
under ``--out``; ``--quick`` is the CI subset ``make test`` runs. ``--suite agentdojo``
runs AgentDojo's prompt-injection suites instead (:mod:`execgraph.cli.eval_agentdojo`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from execgraph.cli.options import err, handled, home_dir
from execgraph.state.errors import UsageError

if TYPE_CHECKING:
    from execgraph.eval.runner import CellResult

__all__ = ["COMMANDS", "eval_"]


def _split(values: list[str] | None) -> tuple[str, ...]:
    """Repeated and comma-separated values alike: ``--arch react,workflow --arch hybrid``."""
    return tuple(v.strip() for item in values or () for v in item.split(",") if v.strip())


@handled
def eval_(
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="The CI subset: 9 tasks, 2 seeds, 3 faults (agentdojo: a sample of pairs).",
        ),
    ] = False,
    suite: Annotated[
        str,
        typer.Option(
            "--suite",
            help="'tasks' (the runtime's own suite) or 'agentdojo' (prompt injections "
            "against a compromised model; needs the agentdojo extra).",
        ),
    ] = "tasks",
    configs: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            help="With --suite agentdojo: a configuration (repeatable; default all).",
        ),
    ] = None,
    seeds: Annotated[
        int | None, typer.Option("--seeds", help="Seeds per cell (default 5; --quick 2).")
    ] = None,
    arch: Annotated[
        list[str] | None, typer.Option("--arch", help="Architecture (repeatable; default all).")
    ] = None,
    ablation: Annotated[
        list[str] | None,
        typer.Option("--ablation", help="Ablation (repeatable; default all)."),
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--tasks",
            help="Task ids or task classes (repeatable; default all). With --suite "
            "agentdojo: AgentDojo suites (workspace, travel, banking, slack).",
        ),
    ] = None,
    noise: Annotated[
        float | None,
        typer.Option("--noise", help="The noisy policy's error probability per decision."),
    ] = None,
    faults: Annotated[
        bool, typer.Option("--faults/--no-faults", help="Also run the fault injections.")
    ] = True,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Worker processes (default: CPU count).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="provider:model — a LangChain chat model instead of the suite's policy "
            "(needs its key; --noise does not apply).",
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature",
            help="With --model: the sampling temperature (recorded in the report).",
        ),
    ] = None,
    flaky: Annotated[
        float | None,
        typer.Option(
            "--flaky",
            help="The task services' outage rate per request: 503, 429, 500, dropped "
            "writes, late reads (default 0.1; 0: reliable).",
        ),
    ] = None,
    person: Annotated[
        str | None,
        typer.Option(
            "--person",
            help="'slow': approvals answered after a seeded delay on simulated time, some "
            "after they expired (default); 'prompt': at once.",
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Directory for eval.json, eval.md and the plots (default: HOME/eval)."
        ),
    ] = None,
) -> int:
    """Evaluate the runtime: every task under every architecture and ablation, per seed.

    Metrics come from each run's event log; acceptance from the suite's own checkers.
    Exit 0, or 4 when any run executed a tool without authorization (must never happen).
    With ``--suite agentdojo``: utility, utility under attack, attack success rate and
    approvals per configuration, against a model that obeys every injection it sees.
    """
    if suite not in ("tasks", "agentdojo"):
        raise UsageError(f"unknown suite {suite!r}; choose 'tasks' or 'agentdojo'")
    if suite == "agentdojo":
        from execgraph.cli.eval_agentdojo import run_agentdojo

        target = (out_dir or home_dir(None) / "eval").expanduser().resolve()
        return run_agentdojo(
            quick=quick, configs=_split(configs), suites=_split(tasks), target=target
        )
    if configs:
        raise UsageError("--config applies to --suite agentdojo")
    # Imported here: the suite (servers, fixtures) loads only for the command that runs it.
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from execgraph.cli.drive import out
    from execgraph.eval.report import write_report
    from execgraph.eval.runner import EvalConfig, evaluate, quick_config, select_tasks
    from execgraph.nodes.model.select import resolve_model

    if model is not None:  # a bad provider:model string fails here, once, not per cell
        resolve_model(model, **({} if temperature is None else {"temperature": temperature}))
    overrides: dict[str, object] = {"faults": faults} if not faults else {}
    settings = (
        ("seeds", seeds),
        ("noise", noise),
        ("workers", workers),
        ("temperature", temperature),
        ("flaky", flaky),
        ("person", person),
    )
    for key, value in settings:
        if value is not None:
            overrides[key] = value
    if arch:
        overrides["architectures"] = _split(arch)
    if ablation:
        overrides["ablations"] = _split(ablation)
    if tasks:
        overrides["tasks"] = select_tasks(_split(tasks))
    if model is not None:
        overrides["model"] = model
    config = quick_config(**overrides) if quick else EvalConfig(**overrides)  # type: ignore[arg-type]
    target = (out_dir or home_dir(None) / "eval").expanduser().resolve()
    total = len(config.cells())
    bar = Progress(
        TextColumn("[bold]eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    with bar:
        job = bar.add_task("eval", total=total, errors=0)
        errors = 0

        def advance(done: int, _total: int, result: CellResult) -> None:
            nonlocal errors
            errors += 0 if result.ok else 1
            bar.update(job, completed=done, errors=errors)

        report = evaluate(config, progress=advance)
    written = write_report(report, target)
    text = written["markdown"].read_text(encoding="utf-8")
    out.print(text, markup=False, highlight=False, soft_wrap=True)  # table rows stay whole
    for path in (written["json"], written["markdown"], *written["plots"]):
        out.print(Text(f"wrote {path}", style="dim"), soft_wrap=True)
    if written["note"]:
        err.print(Text(written["note"], style="yellow"), soft_wrap=True)
    err.print(Text(f"{total} runs in {report.timing['wall_s']:.0f} s", style="dim"))
    unauthorized = sum(
        value
        for group in report.groups.values()
        if math.isfinite(value := group.get("unauthorized_executions", 0.0))
    )
    if unauthorized:
        err.print(Text(f"{unauthorized:.0f} unauthorized executions", style="bold red"))
        return 4
    return 0


COMMANDS = (eval_,)
"""Registered on the app by :mod:`execgraph.cli.commands` (``eval_`` is named ``eval``)."""
